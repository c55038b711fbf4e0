// Agave's Display text for TransactionError / InstructionError, used in
// "Transaction simulation failed: {err}" (cold: only on a failed preflight). Unknown variants fall back to their
// JSON form so the message is never empty.

const TX_ERRORS: Record<string, string> = {
  AccountInUse: 'Account in use',
  AccountLoadedTwice: 'Account loaded twice',
  AccountNotFound: 'Attempt to debit an account but found no record of a prior credit.',
  ProgramAccountNotFound: 'Attempt to load a program that does not exist',
  InsufficientFundsForFee: 'Insufficient funds for fee',
  InvalidAccountForFee: 'This account may not be used to pay transaction fees',
  AlreadyProcessed: 'This transaction has already been processed',
  BlockhashNotFound: 'Blockhash not found',
  CallChainTooDeep: 'Loader call chain is too deep',
  MissingSignatureForFee: 'Transaction requires a fee but has no signature present',
  InvalidAccountIndex: 'Transaction contains an invalid account reference',
  SignatureFailure: 'Transaction did not pass signature verification',
  InvalidProgramForExecution: 'This program may not be used for executing instructions',
  SanitizeFailure: 'Transaction failed to sanitize accounts offsets correctly',
  ClusterMaintenance: 'Transactions are currently disabled due to cluster maintenance',
  AccountBorrowOutstanding: 'Transaction processing left an account with an outstanding borrowed reference',
  WouldExceedMaxBlockCostLimit: 'Transaction would exceed max Block Cost Limit',
  UnsupportedVersion: 'Transaction version is unsupported',
  InvalidWritableAccount: 'Transaction loads a writable account that cannot be written',
  WouldExceedMaxAccountCostLimit: 'Transaction would exceed max account limit within the block',
  WouldExceedAccountDataBlockLimit: 'Transaction would exceed account data limit within the block',
  TooManyAccountLocks: 'Transaction locked too many accounts',
  AddressLookupTableNotFound: 'Transaction loads an address table account that doesn\'t exist',
  InvalidAddressLookupTableOwner: 'Transaction loads an address table account with an invalid owner',
  InvalidAddressLookupTableData: 'Transaction loads an address table account with invalid data',
  InvalidAddressLookupTableIndex: 'Transaction address table lookup uses an invalid index',
  InvalidRentPayingAccount: 'Transaction leaves an account with a lower balance than rent-exempt minimum',
  WouldExceedMaxVoteCostLimit: 'Transaction would exceed max Vote Cost Limit',
  WouldExceedAccountDataTotalLimit: 'Transaction would exceed total account data limit',
  MaxLoadedAccountsDataSizeExceeded: 'Transaction exceeded max loaded accounts data size cap',
  InvalidLoadedAccountsDataSizeLimit: 'LoadedAccountsDataSizeLimit set for transaction must be greater than 0.',
  ResanitizationNeeded: 'ResanitizationNeeded',
  UnbalancedTransaction: 'Sum of account balances before and after transaction do not match',
  ProgramCacheHitMaxLimit: 'Program cache hit max limit',
};

const IX_ERRORS: Record<string, string> = {
  GenericError: 'generic instruction error',
  InvalidArgument: 'invalid program argument',
  InvalidInstructionData: 'invalid instruction data',
  InvalidAccountData: 'invalid account data for instruction',
  AccountDataTooSmall: 'account data too small for instruction',
  InsufficientFunds: 'insufficient funds for instruction',
  IncorrectProgramId: 'incorrect program id for instruction',
  MissingRequiredSignature: 'missing required signature for instruction',
  AccountAlreadyInitialized: 'instruction requires an uninitialized account',
  UninitializedAccount: 'instruction requires an initialized account',
  UnbalancedInstruction: 'sum of account balances before and after instruction do not match',
  ModifiedProgramId: 'instruction illegally modified the program id of an account',
  ExternalAccountLamportSpend: 'instruction spent from the balance of an account it does not own',
  ExternalAccountDataModified: 'instruction modified data of an account it does not own',
  ReadonlyLamportChange: 'instruction changed the balance of a read-only account',
  ReadonlyDataModified: 'instruction modified data of a read-only account',
  DuplicateAccountIndex: 'instruction contains duplicate accounts',
  ExecutableModified: 'instruction changed executable bit of an account',
  AccountNotExecutable: 'instruction expected an executable account',
  NotEnoughAccountKeys: 'insufficient account keys for instruction',
  ComputationalBudgetExceeded: 'Computational budget exceeded',
  InvalidSeeds: 'Provided seeds do not result in a valid address',
  AccountBorrowFailed: 'instruction tries to borrow reference for an account which is already borrowed',
  ProgramFailedToComplete: 'Program failed to complete',
  ProgramFailedToCompile: 'Program failed to compile',
  Immutable: 'Account is immutable',
  IncorrectAuthority: 'Incorrect authority provided',
  InvalidRealloc: 'Failed to reallocate account data',
  MaxSeedLengthExceeded: 'Length of the seed is too long for address generation',
  UnsupportedProgramId: 'Unsupported program id',
  ArithmeticOverflow: 'Program arithmetic overflowed',
  MaxAccountsDataAllocationsExceeded: 'Accounts data allocations exceeded the maximum allowed per transaction',
  MaxInstructionTraceLengthExceeded: 'Max instruction trace length exceeded',
  BuiltinProgramsMustConsumeComputeUnits: 'Builtin programs must consume compute units',
};

function instructionErrorText(e: unknown): string {
  if (typeof e === 'string') return IX_ERRORS[e] ?? e;
  if (e !== null && typeof e === 'object') {
    const o = e as Record<string, unknown>;
    if (typeof o.Custom === 'number') return `custom program error: 0x${o.Custom.toString(16)}`;
    if (typeof o.BorshIoError === 'string') return `Failed to serialize or deserialize account data: ${o.BorshIoError}`;
  }
  return JSON.stringify(e);
}

export function transactionErrorText(err: unknown): string {
  if (typeof err === 'string') return TX_ERRORS[err] ?? err;
  if (err !== null && typeof err === 'object') {
    const o = err as Record<string, unknown>;
    const ie = o.InstructionError;
    if (Array.isArray(ie) && ie.length === 2) return `Error processing Instruction ${String(ie[0])}: ${instructionErrorText(ie[1])}`;
    if (Array.isArray(o.DuplicateInstruction)) return `Transaction contains a duplicate instruction (${String(o.DuplicateInstruction[0])}) that is not allowed`;
    if (o.InsufficientFundsForRent && typeof o.InsufficientFundsForRent === 'object') {
      const idx = (o.InsufficientFundsForRent as { account_index?: number }).account_index;
      return `Transaction results in an account (${String(idx)}) with insufficient funds for rent`;
    }
  }
  return JSON.stringify(err);
}
