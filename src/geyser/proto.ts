// The Yellowstone Geyser service definition (any thread that speaks Geyser gRPC: the localnet's server, the relay's
// telemetry thread; cold: loaded once per process). geyser.proto and solana-storage.proto are vendored unchanged
// (vendor/yellowstone-grpc-proto/, Apache-2.0) and loaded by @grpc/proto-loader, so the server and the client side
// share one definition and nothing is hand-written but the service code. Messages come out as plain objects:
// camelCase fields, uint64 as decimal strings, enums as numbers, bytes as Buffer, `updateOneof` naming the set field.
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadSync, type Options } from '@grpc/proto-loader';
import protobuf from 'protobufjs';
import { loadPackageDefinition, type GrpcObject, type ServiceClientConstructor, type ServiceDefinition } from '@grpc/grpc-js';

/** geyser.proto's enums (numbers on the wire and in loaded messages). */
export const SlotStatus = {
  PROCESSED: 0,
  CONFIRMED: 1,
  FINALIZED: 2,
  FIRST_SHRED_RECEIVED: 3,
  COMPLETED: 4,
  CREATED_BANK: 5,
  DEAD: 6,
} as const;
export type SlotStatusCode = (typeof SlotStatus)[keyof typeof SlotStatus];

export const CommitmentLevel = { PROCESSED: 0, CONFIRMED: 1, FINALIZED: 2 } as const;
export type CommitmentCode = (typeof CommitmentLevel)[keyof typeof CommitmentLevel];

/** The vendored folder, found from this module's place in src/ or dist/src/. */
function protoDir(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 6; i++) {
    const candidate = join(dir, 'vendor', 'yellowstone-grpc-proto');
    if (existsSync(join(candidate, 'geyser.proto'))) return candidate;
    dir = dirname(dir);
  }
  throw new Error('vendor/yellowstone-grpc-proto/geyser.proto not found above ' + fileURLToPath(import.meta.url));
}

export interface GeyserProto {
  readonly service: ServiceDefinition;
  readonly Client: ServiceClientConstructor;
}

let loaded: GeyserProto | null = null;

/** The Geyser service, loaded on first use. */
export function geyserProto(): GeyserProto {
  if (loaded !== null) return loaded;
  const dir = protoDir();
  const def = loadSync('geyser.proto', { includeDirs: [dir], ...OBJECT_OPTIONS });
  const pkg = loadPackageDefinition(def).geyser as GrpcObject;
  const Client = pkg.Geyser as ServiceClientConstructor;
  const subscribe = Client.service.Subscribe;
  if (subscribe === undefined) throw new Error('geyser.proto has no Subscribe');
  subscribe.requestDeserialize = mapSafeDeserializer(dir, 'geyser.SubscribeRequest');
  loaded = { service: Client.service, Client };
  return loaded;
}

const OBJECT_OPTIONS = {
  keepCase: false,
  longs: String,
  enums: Number,
  bytes: Buffer,
  defaults: true,
  arrays: true,
  objects: true,
  oneofs: true,
} as const satisfies Options;

/**
 * A decoder for `typeName` that survives map entries with no value. prost (the Rust side of Yellowstone's clients,
 * the official Node client included) writes `slots: { s: {} }` as an entry with the key alone; protobufjs decodes the
 * value as null and its toObject then throws, which grpc-js answers as INTERNAL "Error deserializing request". An
 * absent message value is the message's defaults (proto3), so null values of message-valued maps become empty
 * messages before toObject.
 */
function mapSafeDeserializer(dir: string, typeName: string): (buf: Buffer) => object {
  const root = new protobuf.Root();
  root.resolvePath = (_origin, target) => (target.startsWith('google/') ? target : join(dir, target));
  root.loadSync('geyser.proto', { keepCase: false });
  const type = root.lookupType(typeName);
  const mapFields = type.fieldsArray.filter((f) => f.map);
  for (const f of mapFields) f.resolve();
  return (buf) => {
    const msg = type.decode(buf) as unknown as Record<string, Record<string, unknown> | undefined>;
    for (const f of mapFields) {
      const map = msg[f.name];
      if (map === undefined || !(f.resolvedType instanceof protobuf.Type)) continue;
      for (const k of Object.keys(map)) if (map[k] === null || map[k] === undefined) map[k] = f.resolvedType.create();
    }
    return type.toObject(msg as unknown as protobuf.Message, OBJECT_OPTIONS);
  };
}
