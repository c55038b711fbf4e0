// The one question the egress scheduler asks: "who leads slot S, and where is their TPU?" (read on the egress hot
// path, so implementations answer from memory: the telemetry snapshot in shared memory, or in tests a fixed table).
// Issue 5's telemetry thread publishes the snapshot; SnapshotLeaderSource (src/telemetry/) reads it. This file is
// the contract between them and the egress scheduler.

export interface LeaderInfo {
  /** Validator identity, base58. */
  readonly identity: string;
  /** "ip:port" of the validator's TPU QUIC port, or null when the cluster does not advertise one. */
  readonly tpuQuic: string | null;
  /** Activated stake in lamports (0 when unknown). */
  readonly stake: number;
}

export interface LeaderSource {
  /** The cluster's current slot as last observed, or -1 when unknown (nothing published yet or stale). */
  currentSlot(): number;
  /** Leader of `slot`, or undefined when the slot is outside the known schedule. */
  leaderAt(slot: number): LeaderInfo | undefined;
  /**
   * Every block producer of `slot`, the leader first (issue #44 item 5: several concurrent proposers are designed, not
   * scheduled; every source answers one today). Absent = [leaderAt(slot)].
   */
  producersAt?(slot: number): readonly LeaderInfo[] | undefined;
  /** Milliseconds since the data behind the answers was produced (for fail-closed decisions). */
  ageMs(): number;
}

/** Leaders hold this many consecutive slots (NUM_CONSECUTIVE_LEADER_SLOTS). */
export const NUM_CONSECUTIVE_LEADER_SLOTS = 4;
