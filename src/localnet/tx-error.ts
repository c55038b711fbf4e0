// litesvm error objects -> Agave's JSON form of TransactionError (localnet thread; per failed transaction, cold).
// Agave serialises TransactionError with serde's externally-tagged enums: "BlockhashNotFound",
// {"InstructionError":[0,{"Custom":1}]}, {"InstructionError":[0,"InvalidArgument"]},
// {"InsufficientFundsForRent":{"account_index":1}}, {"DuplicateInstruction":2}.
import {
  InstructionErrorBorshIo,
  InstructionErrorCustom,
  TransactionErrorDuplicateInstruction,
  TransactionErrorInstructionError,
  TransactionErrorInsufficientFundsForRent,
  TransactionErrorProgramExecutionTemporarilyRestricted,
} from 'litesvm/dist/internal.js';

export type TxErrorJson = string | Record<string, unknown>;

/** Order of litesvm's TransactionErrorFieldless const enum (internal.d.ts). */
const TX_FIELDLESS = [
  'AccountInUse',
  'AccountLoadedTwice',
  'AccountNotFound',
  'ProgramAccountNotFound',
  'InsufficientFundsForFee',
  'InvalidAccountForFee',
  'AlreadyProcessed',
  'BlockhashNotFound',
  'CallChainTooDeep',
  'MissingSignatureForFee',
  'InvalidAccountIndex',
  'SignatureFailure',
  'InvalidProgramForExecution',
  'SanitizeFailure',
  'ClusterMaintenance',
  'AccountBorrowOutstanding',
  'WouldExceedMaxBlockCostLimit',
  'UnsupportedVersion',
  'InvalidWritableAccount',
  'WouldExceedMaxAccountCostLimit',
  'WouldExceedAccountDataBlockLimit',
  'TooManyAccountLocks',
  'AddressLookupTableNotFound',
  'InvalidAddressLookupTableOwner',
  'InvalidAddressLookupTableData',
  'InvalidAddressLookupTableIndex',
  'InvalidRentPayingAccount',
  'WouldExceedMaxVoteCostLimit',
  'WouldExceedAccountDataTotalLimit',
  'MaxLoadedAccountsDataSizeExceeded',
  'ResanitizationNeeded',
  'InvalidLoadedAccountsDataSizeLimit',
  'UnbalancedTransaction',
  'ProgramCacheHitMaxLimit',
  'CommitCancelled',
] as const;

/** Order of litesvm's InstructionErrorFieldless const enum (internal.d.ts). */
const IX_FIELDLESS = [
  'GenericError',
  'InvalidArgument',
  'InvalidInstructionData',
  'InvalidAccountData',
  'AccountDataTooSmall',
  'InsufficientFunds',
  'IncorrectProgramId',
  'MissingRequiredSignature',
  'AccountAlreadyInitialized',
  'UninitializedAccount',
  'UnbalancedInstruction',
  'ModifiedProgramId',
  'ExternalAccountLamportSpend',
  'ExternalAccountDataModified',
  'ReadonlyLamportChange',
  'ReadonlyDataModified',
  'DuplicateAccountIndex',
  'ExecutableModified',
  'RentEpochModified',
  'NotEnoughAccountKeys',
  'AccountDataSizeChanged',
  'AccountNotExecutable',
  'AccountBorrowFailed',
  'AccountBorrowOutstanding',
  'DuplicateAccountOutOfSync',
  'InvalidError',
  'ExecutableDataModified',
  'ExecutableLamportChange',
  'ExecutableAccountNotRentExempt',
  'UnsupportedProgramId',
  'CallDepth',
  'MissingAccount',
  'ReentrancyNotAllowed',
  'MaxSeedLengthExceeded',
  'InvalidSeeds',
  'InvalidRealloc',
  'ComputationalBudgetExceeded',
  'PrivilegeEscalation',
  'ProgramEnvironmentSetupFailure',
  'ProgramFailedToComplete',
  'ProgramFailedToCompile',
  'Immutable',
  'IncorrectAuthority',
  'AccountNotRentExempt',
  'InvalidAccountOwner',
  'ArithmeticOverflow',
  'UnsupportedSysvar',
  'IllegalOwner',
  'MaxAccountsDataAllocationsExceeded',
  'MaxAccountsExceeded',
  'MaxInstructionTraceLengthExceeded',
  'BuiltinProgramsMustConsumeComputeUnits',
  'BorshIoError',
] as const;

function instructionErrorJson(e: unknown): TxErrorJson {
  if (typeof e === 'number') return IX_FIELDLESS[e] ?? `InstructionError${e}`;
  if (e instanceof InstructionErrorCustom) return { Custom: e.code };
  if (e instanceof InstructionErrorBorshIo) return { BorshIoError: e.msg };
  return String(e);
}

export function txErrorJson(e: unknown): TxErrorJson {
  if (typeof e === 'number') return TX_FIELDLESS[e] ?? `TransactionError${e}`;
  if (e instanceof TransactionErrorInstructionError) return { InstructionError: [e.index, instructionErrorJson(e.err())] };
  if (e instanceof TransactionErrorInsufficientFundsForRent) return { InsufficientFundsForRent: { account_index: e.accountIndex } };
  if (e instanceof TransactionErrorDuplicateInstruction) return { DuplicateInstruction: e.index };
  if (e instanceof TransactionErrorProgramExecutionTemporarilyRestricted) {
    return { ProgramExecutionTemporarilyRestricted: { account_index: e.accountIndex } };
  }
  return String(e);
}

/** Web3.js / kit status object for an error: {"Err": err} (legacy `status` field of getSignatureStatuses). */
export function statusJson(err: TxErrorJson | null): Record<string, unknown> {
  return err === null ? { Ok: null } : { Err: err };
}
