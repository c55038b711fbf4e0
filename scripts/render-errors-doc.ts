// Rewrites the generated error table inside docs/errors.md from src/errors/registry.ts.
import { readFileSync, writeFileSync } from 'node:fs';
import { ERRORS_TABLE_BEGIN, ERRORS_TABLE_END, renderErrorsTable } from '../src/errors/render-doc.js';

const file = process.argv[2] ?? 'docs/errors.md';
const doc = readFileSync(file, 'utf8');
const start = doc.indexOf(ERRORS_TABLE_BEGIN);
const end = doc.indexOf(ERRORS_TABLE_END);
if (start < 0 || end < 0) throw new Error(`${file} has no errors-table markers`);
writeFileSync(file, doc.slice(0, start) + renderErrorsTable() + doc.slice(end + ERRORS_TABLE_END.length));
process.stdout.write(`updated ${file}\n`);
