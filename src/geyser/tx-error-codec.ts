// TransactionError in the bytes Geyser carries (the localnet's server encodes, the relay's telemetry thread decodes;
// per failed transaction, cold).
// solana-storage.proto's TransactionError.err is Agave's TransactionError serialised with bincode: a u32 LE variant
// index, then the variant's fields (u8 instruction index, u32 LE inner variant, u32 LE custom code, u8 account
// index, u64 LE length + UTF-8 for a string). The variant orders are Agave's enums (solana-transaction-error); the
// JSON side is the form Agave's RPC renders (src/localnet/tx-error.ts makes it for the localnet). An error this table does not know is sent
// as its nearest honest form: the bare variant is unknown, so GenericError inside InstructionError, or
// SanitizeFailure at the top (both say "failed" to a filter, which is what the stream's readers act on).
/** Agave's JSON form of a TransactionError: "BlockhashNotFound", {"InstructionError":[0,{"Custom":1}]}, ... */
export type TxErrorJson = string | Record<string, unknown>;

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

/**
 * The JSON form of Agave's bincode TransactionError, for the variants this table knows; an unknown variant or a
 * truncated buffer reads as {"Unknown": <hex>} (still an error: a receipt must not read it as success).
 */
export function txErrorFromBincode(b: Uint8Array): TxErrorJson {
  const unknown = { Unknown: Buffer.from(b).toString('hex') };
  if (b.length < 4) return unknown;
  const dv = new DataView(b.buffer, b.byteOffset, b.byteLength);
  const v = dv.getUint32(0, true);
  const name = TX_VARIANTS[v];
  if (name === undefined) return unknown;
  if (name === 'InstructionError') {
    if (b.length < 9) return unknown;
    const index = b[4];
    const iv = dv.getUint32(5, true);
    const iname = IX_VARIANTS[iv];
    if (iname === undefined) return unknown;
    if (iname === 'Custom') return b.length < 13 ? unknown : { InstructionError: [index, { Custom: dv.getUint32(9, true) }] };
    if (iname === 'BorshIoError' && b.length >= 17) {
      const len = Number(dv.getBigUint64(9, true));
      return { InstructionError: [index, { BorshIoError: Buffer.from(b.subarray(17, 17 + len)).toString('utf8') }] };
    }
    return { InstructionError: [index, iname] };
  }
  if (name === 'DuplicateInstruction') return b.length < 5 ? unknown : { DuplicateInstruction: b[4] };
  if (name === 'InsufficientFundsForRent' || name === 'ProgramExecutionTemporarilyRestricted') {
    return b.length < 5 ? unknown : { [name]: { account_index: b[4] } };
  }
  return name;
}
