/**
 * Configuration errors (SPEC 2.3, 2.2 `check-config`): every problem names the path of the offending
 * key in the file, e.g. `combos[1].targets[0].model`, and never carries a secret value.
 */
import * as v from "valibot";
import { suggest, unknownKeysMessage } from "../unknown-keys.ts";

export { suggest };

/** One problem in a configuration file. */
export interface ConfigIssue {
  /**
   * Where in the file: `server.port`, `combos[1].targets[0].model`, `aliases.fast`,
   * `providers[0].models["glm-5.3"]` (keys that are not plain identifiers are quoted), or
   * {@link ROOT_PATH} for the document as a whole (unreadable file, YAML syntax error).
   */
  path: string;
  /** Human-readable explanation. Never contains a secret value (only env var names and file paths). */
  message: string;
  /**
   * The line of the file (1-based) where the key at `path` is written, else its nearest enclosing key
   * or `- ` item (a required key that is missing, a member of a flow mapping `{…}`); absent for the
   * document as a whole and where the file's layout is not followed (src/config/duplicate-keys.ts keyLines).
   */
  line?: number;
}

/**
 * One issue as a line to read: `keys[0].limits.rpm (line 5): rpm must be at least 1; got -1`; a
 * problem of the whole document is led by `file` when given (else {@link ROOT_PATH}).
 */
export function issueText(issue: ConfigIssue, file?: string): string {
  const where = issue.path === ROOT_PATH ? (file ?? ROOT_PATH) : issue.path;
  return `${where}${issue.line !== undefined ? ` (line ${issue.line})` : ""}: ${issue.message}`;
}

/** The path used for problems with the document as a whole. */
export const ROOT_PATH = "(root)";

/**
 * Thrown by the loader when a configuration is invalid. `issues` holds every problem found (the
 * loader does not stop at the first); `message` is the same list as `path: message` lines.
 */
export class ConfigError extends Error {
  override name = "ConfigError";
  readonly issues: ConfigIssue[];
  /** The file the configuration came from, when it came from a file. */
  readonly file?: string;
  /** The reference cycles among `issues` (each reported once, at the reference that closes it), with every member. */
  readonly cycles: readonly ReferenceCycle[];

  constructor(issues: ConfigIssue[], file?: string, cycles: readonly ReferenceCycle[] = []) {
    const head = file ? `invalid configuration ${file}` : "invalid configuration";
    super(`${head}:\n${issues.map((i) => `  ${issueText(i)}`).join("\n")}`);
    this.issues = issues;
    this.file = file;
    this.cycles = cycles;
  }
}

/**
 * A cycle of combos and aliases referring to each other (`a → b → a`): the loader reports it once, at
 * `path` (the reference that closes it); `members` are the combos and aliases in it, in its order,
 * each with the path of its own reference in the cycle (`combos[0].targets[1].model`, `aliases.fast`),
 * so that composing stored objects (src/config/compose.ts) can say the cycle to each member.
 */
export interface ReferenceCycle {
  path: string;
  members: Array<{ name: string; path: string }>;
}

/** The cycle said from `member`'s side: `reference cycle: b → a → b` for member 1 of a → b → a. */
export function cycleMessage(members: readonly { name: string }[], member = 0): string {
  const names = members.map((m) => m.name);
  return `reference cycle: ${[...names.slice(member), ...names.slice(0, member), names[member]].join(" → ")}`;
}

/** One step of a path: an object key or an array index. */
export type PathSegment = string | number;

const IDENT = /^[A-Za-z_][A-Za-z0-9_-]*$/;

/**
 * Formats a path as written in {@link ConfigIssue.path}: `a.b[0].c`; a key that is not an identifier
 * (`glm-5.3`, `a b`) is written `["glm-5.3"]`. An empty path is {@link ROOT_PATH}.
 */
export function formatPath(segments: readonly PathSegment[]): string {
  if (segments.length === 0) return ROOT_PATH;
  let out = "";
  for (const seg of segments) {
    if (typeof seg === "number") out += `[${seg}]`;
    else if (IDENT.test(seg)) out += out === "" ? seg : `.${seg}`;
    else out += `[${JSON.stringify(seg)}]`;
  }
  return out;
}

/** Marks a valibot message that no schema customised, so {@link issueFromValibot} writes its own. */
export const DEFAULT_MESSAGE = "\u0000default";

/** A short, value-free description of what a YAML value is ("a string", "a list", "null", …). */
export function describeKind(value: unknown): string {
  if (value === null) return "null";
  if (value === undefined) return "nothing";
  if (Array.isArray(value)) return "a list";
  switch (typeof value) {
    case "string":
      return "a string";
    case "number":
      return Number.isInteger(value) ? "an integer" : "a number";
    case "boolean":
      return "a boolean";
    case "object":
      return "a mapping";
    default:
      return typeof value;
  }
}

const EXPECTED_WORDS: Record<string, string> = {
  string: "a string",
  number: "a number",
  boolean: "a boolean (true or false)",
  Array: "a list",
  Object: "a mapping",
  unknown: "a value",
};

/**
 * Converts one valibot issue into a {@link ConfigIssue}. Messages written by our schemas are kept;
 * valibot's defaults (which quote the received value, possibly a secret) are replaced by a message that
 * names only the expected and received *kinds*.
 */
export function issueFromValibot(issue: v.BaseIssue<unknown>): ConfigIssue {
  const segments: PathSegment[] = (issue.path ?? []).map((p) => p.key as PathSegment);
  const path = formatPath(segments);
  if (issue.message !== DEFAULT_MESSAGE) return { path, message: issue.message };
  // A required key that is absent: valibot reports it with the key in the path and `expected: "key"`.
  if (issue.input === undefined && issue.expected?.startsWith('"')) return { path, message: "required" };
  const expected = issue.expected ? (EXPECTED_WORDS[issue.expected] ?? issue.expected) : "a different value";
  return { path, message: `expected ${expected}, got ${describeKind(issue.input)}` };
}

/**
 * How a (non-secret) received value is shown in a message: strings quoted and cut at 40 characters,
 * anything else by kind only. Never use it for a value read from a secret field.
 */
export function shown(value: unknown): string {
  if (typeof value === "string") return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value);
  if (typeof value === "number" || typeof value === "boolean") return String(value);
  return describeKind(value);
}

/** Whether a value is a YAML mapping (valibot's object schemas would also accept a list). */
export function isMapping(x: unknown): x is Record<string, unknown> {
  return typeof x === "object" && x !== null && !Array.isArray(x);
}

/**
 * `v.strictObject` with messages written for people: an unknown key names itself, suggests the
 * intended key when it looks like a typo, and lists the allowed keys; a missing key is "required"
 * (or its entry in `required`); a non-mapping (including a list) says what it got. The unknown-key
 * message is the admin API's (src/unknown-keys.ts), worded for a file: "key", the first one only.
 * `what` names the object in messages ("a provider", "the server section"). The mapping check is a
 * {@link mappingGuard}, for the admin API's OpenAPI document.
 */
export function strictObj<E extends v.ObjectEntries>(entries: E, what: string, required: Record<string, string> = {}) {
  const keys = Object.keys(entries);
  // `redaction: true` meant "on": say that the section is a mapping and show its first key.
  const expected = what.includes("mapping") || keys.length === 0 ? what : `${what} (a mapping, e.g. { ${keys[0]}: … })`;
  const object = v.strictObject(entries, (issue) => {
    if (issue.expected === "never" && typeof issue.input === "string") return unknownKeysMessage(issue, keys, { noun: "key", what, all: false });
    if (issue.input === undefined && issue.expected?.startsWith('"')) {
      return required[issue.expected.slice(1, -1)] ?? "required";
    }
    return `expected ${expected}, got ${describeKind(issue.input)}`;
  });
  return v.pipe(mappingGuard(object, (issue) => `expected ${expected}, got ${describeKind(issue.input)}`), object);
}

/**
 * The check that a value is a mapping, naming the schema that reads it next ({@link MappingGuard}):
 * `v.pipe(mappingGuard(schema, message), schema)`.
 */
export function mappingGuard(schema: v.GenericSchema, message: (issue: v.CustomIssue) => string): ReturnType<typeof v.custom<Record<string, unknown>>> & MappingGuard {
  return Object.assign(v.custom<Record<string, unknown>>(isMapping, message), { mappingOf: schema });
}

/**
 * The first schema of a {@link strictObj}'s pipe: a custom check (valibot's object schemas take a list
 * too) that names the object schema after it. A JSON Schema converter sees only the custom check (in
 * `typeMode: "input"` it stops a pipe at its first schema, and a custom one is `{}`, any), so the admin
 * API's OpenAPI document converts `mappingOf` in its place (src/admin/openapi.ts; newuser15 N4).
 */
export interface MappingGuard {
  readonly mappingOf: v.GenericSchema;
}
