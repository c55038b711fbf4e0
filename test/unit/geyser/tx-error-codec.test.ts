// Agave's bincode TransactionError, both ways (src/geyser/tx-error-codec.ts): what the localnet's Geyser server sends
// reads back as the JSON form the RPC shows, for the variants with and without fields; bytes it does not know read
// as an error, never as success.
import { describe, expect, it } from 'vitest';
import { txErrorBincode, txErrorFromBincode } from '../../../src/geyser/tx-error-codec.js';

describe('tx-error codec', () => {
  it.each([
    'BlockhashNotFound',
    'AccountNotFound',
    'InsufficientFundsForFee',
    'AlreadyProcessed',
    'WouldExceedAccountDataTotalLimit',
    'CommitCancelled',
    { InstructionError: [0, { Custom: 1 }] },
    { InstructionError: [3, { Custom: 6001 }] },
    { InstructionError: [1, 'InvalidArgument'] },
    { InstructionError: [2, 'ComputationalBudgetExceeded'] },
    { InstructionError: [0, { BorshIoError: 'Unknown' }] },
    { DuplicateInstruction: 2 },
    { InsufficientFundsForRent: { account_index: 1 } },
    { ProgramExecutionTemporarilyRestricted: { account_index: 4 } },
  ])('round trip %j', (err) => {
    expect(txErrorFromBincode(txErrorBincode(err))).toEqual(err);
  });

  it('encodes InstructionError Custom as Agave does: u32 8, u8 index, u32 25, u32 code (little endian)', () => {
    expect([...txErrorBincode({ InstructionError: [0, { Custom: 1 }] })]).toEqual([8, 0, 0, 0, 0, 25, 0, 0, 0, 1, 0, 0, 0]);
  });

  it('reads unknown or truncated bytes as an error, never as success', () => {
    expect(txErrorFromBincode(Uint8Array.from([200, 0, 0, 0]))).toEqual({ Unknown: 'c8000000' });
    expect(txErrorFromBincode(Uint8Array.from([8, 0]))).toEqual({ Unknown: '0800' });
  });
});
