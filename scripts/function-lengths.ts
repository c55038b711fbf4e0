// The longest functions of a tree, by source lines (cold; a review aid, run by hand): parses each .ts file with the
// TypeScript compiler's own parser and prints the N longest function bodies (declarations, methods, arrow functions
// and function expressions), nested ones counted on their own as well as inside their parent.
//   node dist/scripts/function-lengths.js [--top N] DIR...
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';

interface FunctionSpan {
  readonly file: string;
  readonly name: string;
  readonly line: number;
  readonly lines: number;
}

function tsFiles(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir)) {
    const path = join(dir, entry);
    if (statSync(path).isDirectory()) out.push(...tsFiles(path));
    else if (path.endsWith('.ts') && !path.endsWith('.d.ts')) out.push(path);
  }
  return out;
}

function nameOf(node: ts.Node, source: ts.SourceFile): string {
  if ((ts.isFunctionDeclaration(node) || ts.isMethodDeclaration(node) || ts.isFunctionExpression(node)) && node.name) {
    return node.name.getText(source);
  }
  if (ts.isConstructorDeclaration(node)) return 'constructor';
  const parent = node.parent;
  if (parent && ts.isVariableDeclaration(parent)) return parent.name.getText(source);
  if (parent && ts.isPropertyAssignment(parent)) return parent.name.getText(source);
  if (parent && ts.isPropertyDeclaration(parent)) return parent.name.getText(source);
  return '(anonymous)';
}

function spansOf(file: string): FunctionSpan[] {
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.ES2022, true);
  const spans: FunctionSpan[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isFunctionLike(node) && 'body' in node && node.body) {
      const start = source.getLineAndCharacterOfPosition(node.getStart(source)).line;
      const end = source.getLineAndCharacterOfPosition(node.getEnd()).line;
      spans.push({ file, name: nameOf(node, source), line: start + 1, lines: end - start + 1 });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return spans;
}

const args = process.argv.slice(2);
let top = 15;
const dirs: string[] = [];
for (let i = 0; i < args.length; i++) {
  if (args[i] === '--top') top = Number(args[++i]);
  else dirs.push(args[i]!);
}
const all = dirs.flatMap(tsFiles).flatMap(spansOf).sort((a, b) => b.lines - a.lines);
const over = (n: number): number => all.filter((s) => s.lines > n).length;
process.stdout.write(`${all.length} functions; over 80 lines: ${over(80)}; over 150 lines: ${over(150)}\n`);
for (const s of all.slice(0, top)) process.stdout.write(`${String(s.lines).padStart(5)}  ${s.file}:${s.line}  ${s.name}\n`);
