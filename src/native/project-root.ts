// The checkout's root (cold): the nearest directory above this module holding a package.json, from src/ or dist/src/
// alike. Where build steps write native files the loaders then read (dist/native/...).
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export function projectRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, 'package.json')) && dirname(dir) !== dir) dir = dirname(dir);
  return dir;
}
