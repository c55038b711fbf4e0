// Parsing a config, keys, location or plan text, and what its failure may say (cold: start, reload, the CLI; main
// thread). The parsers' own messages quote the text around the error: yaml prints the offending line with a caret,
// V8's JSON.parse (Node 21+) quotes up to ~30 characters of it. In a keys file, or a config that holds keys, tokens
// or URLs with credentials, that excerpt is a secret in clear, and a reload's refusal goes to the log, /health?detail,
// the status page and `slotrelay reload` (issue #47 item 1). So the message is rebuilt from the position and a closed
// set of causes, never from the parser's text.
import { parse as parseYaml, parseDocument, YAMLParseError } from 'yaml';

/** yaml's error codes (its ErrorCode union) in our words; none of them quotes the text. */
const YAML_CAUSES: Readonly<Record<string, string>> = {
  ALIAS_PROPS: 'an alias cannot have an anchor or a tag',
  BAD_ALIAS: 'an alias that names no anchor',
  BAD_COLLECTION_TYPE: 'a collection of the wrong type for its tag',
  BAD_DIRECTIVE: 'a directive it does not know',
  BAD_DQ_ESCAPE: 'a bad escape in a double-quoted string',
  BAD_INDENT: 'bad indentation (a list or mapping not indented enough, or a bracket not closed)',
  BAD_PROP_ORDER: 'an anchor or tag in the wrong place',
  BAD_SCALAR_START: 'a plain value that cannot start with this character (quote it)',
  BLOCK_AS_IMPLICIT_KEY: 'a nested mapping on one line (a missing line break, or a value that needs quotes)',
  BLOCK_IN_FLOW: 'a block collection inside [ ] or { }',
  DUPLICATE_KEY: 'a key that appears twice in one mapping',
  IMPOSSIBLE: 'a structure the parser cannot read',
  KEY_OVER_1024_CHARS: 'a key longer than 1,024 characters',
  MISSING_CHAR: 'a missing character (a closing quote or bracket, or the space after a colon)',
  MULTILINE_IMPLICIT_KEY: 'a key that runs over several lines',
  MULTIPLE_ANCHORS: 'two anchors on one node',
  MULTIPLE_DOCS: 'more than one document (---)',
  MULTIPLE_TAGS: 'two tags on one node',
  NON_STRING_KEY: 'a key that is not a string',
  TAB_AS_INDENT: 'a tab used for indentation (use spaces)',
  TAG_RESOLVE_FAILED: 'a value that does not match its tag',
  UNEXPECTED_TOKEN: 'an unexpected character or token',
};

/** V8's JSON.parse messages (Node 20-26) matched to a cause in our words: the match is on V8's fixed wording only. */
const JSON_CAUSES: readonly (readonly [RegExp, string])[] = [
  [/^Unexpected end of JSON input/, 'the text ends before the JSON does'],
  [/^Unterminated string/, 'a string with no closing quote'],
  [/^Bad control character/, 'a control character inside a string'],
  [/^Bad escaped character|^Bad Unicode escape/, 'a bad escape inside a string'],
  [/^Expected property name/, "a property name (in double quotes) or '}' expected"],
  [/^Expected double-quoted property name/, 'a property name in double quotes expected'],
  [/^Expected ',' or '}'/, "',' or '}' expected after a property value"],
  [/^Expected ',' or '\]'/, "',' or ']' expected after an element"],
  [/^Expected ':'/, "':' expected after a property name"],
  [/^Unexpected non-whitespace character after JSON/, 'more text after the JSON value'],
  [/^Unexpected number/, 'an unexpected number'],
  [/^Unexpected string/, 'an unexpected string'],
  [/^Unexpected token/, 'an unexpected character'],
];

/** A text that could not be parsed: `message` says where and why, never what the text holds. */
export class ParseFailure extends Error {
  constructor(
    readonly line: number | null,
    readonly column: number | null,
    readonly reason: string,
  ) {
    super(line === null ? reason : `line ${line}, column ${column ?? 1}: ${reason}`);
  }
}

/** 1-based line and column of a 0-based offset into `text`. */
function lineColumnAt(text: string, offset: number): { line: number; column: number } {
  let line = 1;
  let lineStart = 0;
  for (let i = 0; i < offset && i < text.length; i++) {
    if (text.charCodeAt(i) === 10) {
      line++;
      lineStart = i + 1;
    }
  }
  return { line, column: offset - lineStart + 1 };
}

function yamlFailure(err: unknown): ParseFailure {
  if (err instanceof YAMLParseError) {
    const at = err.linePos?.[0];
    return new ParseFailure(at?.line ?? null, at?.col ?? null, YAML_CAUSES[err.code] ?? 'not valid YAML');
  }
  // yaml's other throws (a resource limit such as too many aliases): their messages may not quote the text, but that
  // is not promised, so none of them is repeated.
  return new ParseFailure(null, null, 'not valid YAML');
}

function jsonFailure(err: unknown, text: string): ParseFailure {
  const v8 = err instanceof Error ? err.message : '';
  const cause = JSON_CAUSES.find(([re]) => re.test(v8))?.[1] ?? 'not valid JSON';
  const position = /at position (\d+)/.exec(v8);
  if (position !== null) {
    const { line, column } = lineColumnAt(text, Number(position[1]));
    return new ParseFailure(line, column, cause);
  }
  if (/^Unexpected end of JSON input/.test(v8)) {
    const { line, column } = lineColumnAt(text, text.length);
    return new ParseFailure(line, column, cause);
  }
  // Node 21+ gives no position for some errors ("Unexpected token 'x', "..." is not valid JSON"): yaml reads JSON too
  // and, for these texts, fails at the same place with a position.
  const located = parseDocument(text).errors[0]?.linePos?.[0];
  return new ParseFailure(located?.line ?? null, located?.col ?? null, cause);
}

/**
 * Parse YAML (or JSON when `format` is 'json') into a plain value. Throws ParseFailure, whose message names the line,
 * column and cause, never the text.
 */
export function parseStructuredText(text: string, format: 'yaml' | 'json'): unknown {
  if (format === 'json') {
    try {
      return JSON.parse(text) as unknown;
    } catch (err) {
      throw jsonFailure(err, text);
    }
  }
  try {
    return parseYaml(text) as unknown;
  } catch (err) {
    throw yamlFailure(err);
  }
}

/** The format a file's name gives: `.json` is JSON, anything else YAML (as every file the relay reads). */
export const formatOfFile = (file: string): 'yaml' | 'json' => (file.endsWith('.json') ? 'json' : 'yaml');
