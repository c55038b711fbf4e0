// TransactionError in the bytes Geyser carries (localnet process, main thread; per failed transaction, cold).
// solana-storage.proto's TransactionError.err is Agave's TransactionError serialised with bincode: a u32 LE variant
// index, then the variant's fields (u8 instruction index, u32 LE inner variant, u32 LE custom code, u8 account
// index, u64 LE length + UTF-8 for a string). The variant orders are Agave's enums (solana-transaction-error); the
// input is the JSON form the localnet renders (src/localnet/tx-error.ts). An error this table does not know is sent
// as its nearest honest form: the bare variant is unknown, so GenericError inside InstructionError, or
// SanitizeFailure at the top (both say "failed" to a filter, which is what the stream's readers act on).
import type { TxErrorJson } from '../tx-error.js';

const TX_VARIANTS = [
  'AccountInUse', 'AccountLoadedTwice', 'AccountNotFound', 'ProgramAccountNotFound', 'InsufficientFundsForFee',
  'InvalidAccountForFee', 'AlreadyProcessed', 'BlockhashNotFound', 'InstructionError', 'CallChainTooDeep',
  'MissingSignatureForFee', 'InvalidAccountIndex', 'SignatureFailure', 'InvalidProgramForExecution', 'SanitizeFailure',
  'ClusterMaintenance', 'AccountBorrowOutstanding', 'WouldExceedMaxBlockCostLimit', 'UnsupportedVersion',
  'InvalidWritableAccount', 'WouldExceedMaxAccountCostLimit', 'WouldExceedAccountDataBlockLimit', 'TooManyAccountLocks',
  'AddressLookupTableNotFound', 'InvalidAddressLookupTableOwner', 'InvalidAddressLookupTableData',
  'InvalidAddressLookupTableIndex', 'InvalidRentPayingAccount', 'WouldExceedMaxVoteCostLimit',
  'WouldExceedAccountDataTotalLimit', 'DuplicateInstruction', 'InsufficientFundsForRent',
  'MaxLoadedAccountsDataSizeExceeded', 'InvalidLoadedAccountsDataSizeLimit', 'ResanitizationNeeded',
  'ProgramExecutionTemporarilyRestricted', 'UnbalancedTransaction', 'ProgramCacheHitMaxLimit', 'CommitCancelled',
] as const;

const IX_VARIANTS = [
  'GenericError', 'InvalidArgument', 'InvalidInstructionData', 'InvalidAccountData', 'AccountDataTooSmall',
  'InsufficientFunds', 'IncorrectProgramId', 'MissingRequiredSignature', 'AccountAlreadyInitialized',
  'UninitializedAccount', 'UnbalancedInstruction', 'ModifiedProgramId', 'ExternalAccountLamportSpend',
  'ExternalAccountDataModified', 'ReadonlyLamportChange', 'ReadonlyDataModified', 'DuplicateAccountIndex',
  'ExecutableModified', 'RentEpochModified', 'NotEnoughAccountKeys', 'AccountDataSizeChanged', 'AccountNotExecutable',
  'AccountBorrowFailed', 'AccountBorrowOutstanding', 'DuplicateAccountOutOfSync', 'Custom', 'InvalidError',
  'ExecutableDataModified', 'ExecutableLamportChange', 'ExecutableAccountNotRentExempt', 'UnsupportedProgramId',
  'CallDepth', 'MissingAccount', 'ReentrancyNotAllowed', 'MaxSeedLengthExceeded', 'InvalidSeeds', 'InvalidRealloc',
  'ComputationalBudgetExceeded', 'PrivilegeEscalation', 'ProgramEnvironmentSetupFailure', 'ProgramFailedToComplete',
  'ProgramFailedToCompile', 'Immutable', 'IncorrectAuthority', 'BorshIoError', 'AccountNotRentExempt',
  'InvalidAccountOwner', 'ArithmeticOverflow', 'UnsupportedSysvar', 'IllegalOwner', 'MaxAccountsDataAllocationsExceeded',
  'MaxAccountsExceeded', 'MaxInstructionTraceLengthExceeded', 'BuiltinProgramsMustConsumeComputeUnits',
] as const;

const u32 = (n: number): number[] => [n & 0xff, (n >>> 8) & 0xff, (n >>> 16) & 0xff, (n >>> 24) & 0xff];

function str(s: string): number[] {
  const b = Buffer.from(s, 'utf8');
  return [...u32(b.length), 0, 0, 0, 0, ...b];
}

function instructionError(inner: unknown): number[] {
  if (typeof inner === 'string') {
    const i = (IX_VARIANTS as readonly string[]).indexOf(inner);
    return u32(Math.max(0, i));
  }
  if (inner !== null && typeof inner === 'object') {
    const [name, value] = Object.entries(inner)[0] ?? ['', null];
    if (name === 'Custom' && typeof value === 'number') return [...u32(25), ...u32(value)];
    if (name === 'BorshIoError') return [...u32(44), ...str(typeof value === 'string' ? value : '')];
  }
  return u32(0);
}

/** Agave's bincode of a TransactionError given in its JSON form. */
export function txErrorBincode(err: TxErrorJson): Buffer {
  if (typeof err === 'string') {
    const i = (TX_VARIANTS as readonly string[]).indexOf(err);
    return Buffer.from(u32(i >= 0 && err !== 'InstructionError' ? i : 14));
  }
  const [name, value] = Object.entries(err)[0] ?? ['', null];
  if (name === 'InstructionError' && Array.isArray(value)) {
    return Buffer.from([...u32(8), Number(value[0]) & 0xff, ...instructionError(value[1])]);
  }
  if (name === 'DuplicateInstruction') return Buffer.from([...u32(30), Number(value) & 0xff]);
  if (name === 'InsufficientFundsForRent' || name === 'ProgramExecutionTemporarilyRestricted') {
    const idx = value !== null && typeof value === 'object' ? Number((value as { account_index?: number }).account_index ?? 0) : 0;
    return Buffer.from([...u32(name === 'InsufficientFundsForRent' ? 31 : 35), idx & 0xff]);
  }
  return Buffer.from(u32(14));
}
