/**
 * redact (SPEC R-1, S-3): optional PII redaction of the outgoing prompt, after the guard and before
 * routing, on the client body. Off by default (config `settings.redaction.enabled`).
 *
 * What is replaced, in every text the model reads (the client format's `FormatCodec.promptText`
 * accessor: system prompt, message text, tool-call arguments, tool results; never tool schemas, ids,
 * names, the model, media, or signed reasoning). Tool-call arguments that travel as JSON text (Chat,
 * Responses) are redacted on their decoded string values and stay valid JSON (pipeline/redact-json.ts);
 * those that travel as objects (Anthropic `tool_use.input`, Gemini `functionCall.args`, and Gemini's
 * structured `functionResponse.response`) are redacted in each string member, nested ones included,
 * and a number in them that is a card number, under any name (pipeline/redact-numbers.ts), becomes its
 * placeholder as a string, as it does in JSON text (until 2026-12-07 it went upstream in clear there).
 * A member's value is redacted knowing the member's name: under a secret-named member
 * (`{"password": "P@ssw0rd123!"}`, `{"Authorization": "…"}`) the whole value, whatever its characters,
 * is a secret (`summer_2024`, `john.smith1985`; a number too: `{"password": 1234}`; under 8 characters
 * only under a name like `password`) unless it says there is none, is a mask, a reference or a version
 * (see {@link memberSecretOk}); member names (mostly a tool's
 * parameter names) go through every pattern, so an address used as a key, or `password=…` written into
 * a name, is replaced too; a name that would become one another member of its object already has
 * (`Bob@Example.com` next to `bob@example.com`) gets a placeholder of its own ({@link Redactor.redactKey}). A plain text that is a
 * JSON document (starts with `{` or `[` and parses: an MCP tool result) is redacted the same way as
 * JSON-text arguments, and so is a string value inside either that is a JSON document itself (an MCP
 * result's `text`, a `{"body": "{…}"}` argument). What is replaced:
 *
 * | kind | placeholder | what |
 * |---|---|---|
 * | `secret` | `[SECRET_n]` | private-key blocks; well-known token shapes (`sk-…`, `sk_live_…`, `AKIA…`/`ASIA…`, `ghp_…`/`github_pat_…`, `xox?-…`, `AIza…`, `glpat-…`, `ya29.…`, `npm_…`, `hf_…`, JWTs); the token after `Bearer`/`Basic`; a URL's password; the value assigned to a secret-named key in text (`API_KEY=…`, `password: …`) when it mixes letters and digits (the run after it up to white space, a quote, the line's end or code punctuation `,;()[]{}<>|`, symbols such as `&!#@$%` included, at most 4,096 characters: {@link KEYED_CHAR}); the whole value of a secret-named object member ({@link memberSecretOk}). A bare hex or base64 string is NOT a secret (commit hashes, checksums, lockfile integrity hashes are everywhere in code). |
 * | `email` | `[EMAIL_n]` | `local@domain.tld` (not `git@…` remotes or `noreply@…`) |
 * | `card` | `[CARD_n]` | 13–19 digits, plain or in groups of 4 (Amex 4-6-5), with a card-network prefix and a valid Luhn check digit |
 * | `ipv6` | `[IPV6_n]` | a valid IPv6 address with at least one digit (not `::1`; not `std::abs`, MACs, times) |
 * | `ipv4` | `[IPV4_n]` | a dotted quad (not loopback `127.*`, `0.0.0.0`, netmasks, or a version `v1.2.3.4`) |
 * | `phone` | `[PHONE_n]` | `+` and 8–15 digits (E.164, separators allowed), or North-American `(212) 555-0100` / `212-555-0100` / `212.555.0100` |
 *
 * Placeholders are stable within one request: the same value gets the same placeholder everywhere in
 * the body, so the model can still refer to them (a JSON number and a string of the same text are two
 * values: each is restored in its own type, {@link Redactor.numberText}). Numbering, per kind, is in order of first
 * appearance: texts in body order, and within one text in text order (whichever pattern found the
 * value). A placeholder-shaped text the prompt holds literally (`[EMAIL_1]` in a template or a grep
 * output) is skipped when it appears in the same or an earlier text (a tool call's JSON-text arguments,
 * a JSON tool result, one tool call's input object or one structured tool result is one text, however
 * many values it holds); a value's number never depends
 * on texts after it. So a growing conversation (texts only appended) keeps every earlier placeholder,
 * its redacted prefix stays byte-identical, and a provider's prefix cache hits. A literal that appears
 * only after its number was given out reads as that placeholder (to the model, and in the reply
 * mapped back).
 *
 * Secrets restored into earlier replies to the same client key by this instance (pipeline/ports.ts
 * `RestoredSecretMemories`; requests without a key share one memory) are replaced wherever they stand, also without the context they were found by (`the password is …` in
 * the assistant text a client sends back); each one found is remembered again, so the memory keeps it
 * for as long as the conversation keeps sending it.
 *
 * Each replacement is counted by kind in `ctx.trace.redactions`; values are never logged or traced.
 * When anything was replaced the body is re-serialised (`ctx.rawBody`), so native passthrough sends the
 * redacted body. The reply is mapped back (S-3): `ctx.restoration` keeps each placeholder's original
 * value (the text first seen for it) for pipeline/restore-placeholders.ts, which the reply drivers apply.
 */
import type { TextSlot } from "../formats/codec.ts";
import { codecFor } from "../formats/index.ts";
import { bodyBytes, type RequestContext } from "./context.ts";
import { KEY_SHAPE_AFTER, KEY_SHAPE_BEFORE, KEY_SHAPES_SOURCE, replacePrivateKeyBlocks } from "./key-shapes.ts";
import { escapedLiterals, redactJsonDocument, redactJsonText } from "./redact-json.ts";
import { keyId } from "./key-id.ts";
import { cardOk, numberSlots } from "./redact-numbers.ts";
import type { RestoredSecretMemories, RestoredSecrets } from "./ports.ts";
import type { PlaceholderValue } from "./restore-placeholders.ts";
import { itemMember } from "./secret-items.ts";

export { luhn } from "./redact-numbers.ts";

/** Redaction settings (config `settings.redaction`, SPEC 2.3). */
export interface RedactionSettings {
  /** SPEC S-3: off by default. */
  enabled: boolean;
}

/** What a redaction replaced (the key of `trace.redactions`). */
export type RedactionKind = "secret" | "email" | "card" | "ipv6" | "ipv4" | "phone";

const LABEL: Record<RedactionKind, string> = { secret: "SECRET", email: "EMAIL", card: "CARD", ipv6: "IPV6", ipv4: "IPV4", phone: "PHONE" };

/**
 * One pattern. Every regex has two capture groups: text kept as it is (often empty) and the value
 * replaced; `accept` may reject a candidate (validity checks, false-positive guards) given the value
 * and the text just before the match.
 */
interface Pattern {
  kind: RedactionKind;
  re: RegExp;
  accept?: (value: string, before: string) => boolean;
  /**
   * What a text must hold for this pattern to find anything in it (a necessary condition, cheap to
   * test): texts that hold none of the patterns' `needs` are not searched (see {@link MAY_MATCH}).
   */
  needs: RegExp;
  /** The identity of a value for placeholder reuse (a card with or without spaces is one card). */
  identity?: (value: string) => string;
}

const digitsOnly = (v: string) => v.replace(/\D/g, "");

const hasDigit = (s: string) => /\d/.test(s);
const hasLetter = (s: string) => /[A-Za-z]/.test(s);

/** Valid IPv6 text (with an optional trailing dotted quad), at least one digit, not loopback/unspecified. */
export function ipv6Ok(value: string): boolean {
  if (!hasDigit(value) || value === "::1" || value === "::") return false;
  let v = value;
  let extra = 0;
  const quad = /(?:^|:)(\d{1,3}(?:\.\d{1,3}){3})$/.exec(v);
  if (quad) {
    if (!ipv4Valid(quad[1])) return false;
    v = v.slice(0, v.length - quad[1].length) + (v.endsWith(":" + quad[1]) ? "0" : "");
    extra = 1;
  }
  const halves = v.split("::");
  if (halves.length > 2) return false;
  const groups = halves.map((h) => (h === "" ? [] : h.split(":")));
  for (const g of groups) for (const x of g) if (!/^[0-9A-Fa-f]{1,4}$/.test(x)) return false;
  const n = groups.reduce((a, g) => a + g.length, 0) + extra;
  return halves.length === 2 ? n <= 7 && n >= 1 : n === 8;
}

function ipv4Valid(v: string): boolean {
  return v.split(".").every((o) => /^(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)$/.test(o));
}

function ipv4Ok(value: string, before: string): boolean {
  if (!ipv4Valid(value)) return false;
  if (/^(?:127|0)\./.test(value) || value === "255.255.255.255") return false;
  if (/^255\.(?:255|254|252|248|240|224|192|128|0)\./.test(value)) return false; // netmask
  if (/\b(?:version|ver|release)\s*[:=]?\s*$/i.test(before)) return false;
  return true;
}

function phoneOk(value: string): boolean {
  const digits = value.replace(/\D/g, "");
  if (value.startsWith("+")) {
    if (digits.length < 8 || digits.length > 15) return false;
    return /[ .()-]/.test(value) || digits.length >= 10;
  }
  if (digits.length !== 10) return false;
  const seps = value.replace(/[\d()]/g, "");
  // 212-555-0100, 212.555.0100, 212 555 0100: one separator kind; (212) 555-0100 as written.
  return /^\(/.test(value) || new Set(seps).size === 1;
}

/**
 * One character of a value assigned to a secret-named key in text (`password: Tr0ub4dor&3!`,
 * `API_KEY=abc#123`): anything but white space, a quote or backtick, a backslash (an escaped quote or
 * `\n` in JSON-escaped text), the punctuation that ends a value in code and prose (`, ; ( ) [ ] { } < > |`:
 * `hash(pw1),` and `{password:t.pw1,token:r}` are code, `[SECRET_1]` a placeholder), a found value's
 * marker, and a `&` that starts the next parameter of a query string (`?api_key=abc123&format=json`).
 */
const KEYED_CHAR = "(?:[^\\s\"'`\\\\,;(){}\\[\\]<>|&\\uE000-\\uE019]|&(?![\\w.;-]*=))";
/**
 * The value assigned to a secret-named key in text: its characters ({@link KEYED_CHAR}), 8 to 4,096 of
 * them; a longer run (a blob, not a password) is taken as before symbols were: letters, digits and `+/_.~=-`.
 */
const KEYED_VALUE_SOURCE = `${KEYED_CHAR}{8,4096}(?!${KEYED_CHAR})|[A-Za-z0-9+/_.~=-]{8,}`;

/** A value assigned to a secret-named key is a secret when it mixes letters and digits (not `process.env.X`, not `4096`). */
function keyedOk(value: string): boolean {
  return hasDigit(value) && hasLetter(value) && keyedShapeOk(value);
}

/** Not `process.env.X`, not an identifier (`token_count_v2`), not a version, not a shell or Windows variable (`$DB_PASS2`, `%DB_PASS2%`). */
function keyedShapeOk(value: string): boolean {
  if (/^\$[A-Za-z_]\w*$|^%[A-Za-z_]\w*%$/.test(value)) return false;
  if (/^[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)+$/.test(value)) return false; // process.env.TOKEN_2, config.auth.key1
  if (/^[a-z]+(?:_[a-z0-9]+)+$/.test(value)) return false; // an identifier: token_count_v2
  if (/^v?\d+(?:\.\d+)+(?:[-+][0-9A-Za-z.]+)?$/.test(value)) return false; // a version, whole (`2.5Tr0ub4dor&3!` is not one)
  return true;
}

/**
 * The word a secret-named key (`API_KEY`, `client_secret`, `dbPassword`, `encryptionKey`, `auth_token`)
 * ends in, matched where the word starts (what comes before it is part of the name: `DB_`, `client_`).
 * A key of a kind that holds a secret (`api_key`, `private_key`, `access_key`, `secret_key`,
 * `encryption_key`, `signing_key`, `hmac_key`, …: the kind is looked for behind `key`), not any `*_key`
 * (`primary_key`, `cache_key`, `sort_key` are not secrets); `token` in the singular only (`max_tokens`,
 * `input_tokens` are counts). Whoever uses it makes sure the name ends there (`key_count`,
 * `token_count`, `keyboard`, `password_hint` are not secret-named). Anchored on the word, a text is
 * searched faster than when each name's start was tried with every word (1 MB of prose and code: 1.9 ms,
 * against 2.6 ms for the shorter word list before session 41 and 3.9 ms for this one that way).
 */
const SECRET_WORD =
  "(?:(?:(?<=(?:api|private|access|secret|encryption|decryption|signing|master|session|hmac|auth|license|account|subscription)[_-]?(?:access[_-]?)?)key|secret|passw(?:or)?d|credentials?)s?|token)";
/**
 * An object member's name that is a secret-named key, as a whole: the names above, and (as a whole
 * name or after a `_`, `-` or `.`: not `bypass`, `compass`) `authorization`, `pwd`, `pass`,
 * `passphrase`, `passcode`, `cookie`; those also after another word in camelCase ({@link CAMEL_SECRET_NAME}).
 */
const SECRET_NAME = new RegExp(`^(?:[A-Za-z0-9_.-]{0,40}?${SECRET_WORD}|(?:[A-Za-z0-9_.-]{0,40}[_.-])?(?:authorization|pwd|pass(?:phrase|code)?|cookie)s?)$`, "i");
/**
 * {@link SECRET_NAME}'s short words written camelCase after another word (`dbPass`, `smtpPwd`,
 * `userPasscode`, `proxyAuthorization`, `sessionCookie`, and after an acronym: `DBPass`, `SMTPPwd`,
 * `HTTPAuthorization`: their values went upstream in clear, `db_pass`'s did not); case-sensitive, so
 * `bypass` and `compass` stay plain words (and `byPass`, `ByPass`, `BYPass` one).
 */
const CAMEL_SECRET_NAME = /^[A-Za-z0-9_.-]{0,40}[A-Za-z0-9](?:Authorization|Pwd|(?<![Bb][Yy])Pass(?:phrase|code)?|Cookie)s?$/;
/**
 * Where the value under a secret-named member lies in `text`: the whole of it but surrounding white
 * space and a pair of quotes, as [start, end); undefined when that is empty or longer than 65,536
 * characters (the search is linear: a long Cookie header under `cookie` is still one value).
 */
function memberValue(text: string): [number, number] | undefined {
  let a = text.length - text.trimStart().length;
  let b = text.trimEnd().length;
  const q = text[a];
  if (b - a >= 2 && (q === '"' || q === "'") && text[b - 1] === q) {
    a++;
    b--;
  }
  return b > a && b - a <= 65_536 ? [a, b] : undefined;
}

/** A literal that says there is no value: `null`, `none`, `true`, `false`, `n/a`, … (any case). */
const NO_VALUE = /^(?:null|nil|none|undefined|true|false|yes|no|on|off|n\/?a)$/i;
/** A mask written where a value was taken out: `***`, `••••`, `xxxx-xxxx`, `[REDACTED]`, `(hidden)`. */
const MASKED = /^(?:[*•●·.…_#?xX\s-]+|[[(<*]*(?:redacted|hidden|masked|removed|filtered|omitted|sanitized|sanitised)[\])>*]*)$/i;
/**
 * A reference to a value kept elsewhere: `$DB_PASSWORD`, `${DB_PASSWORD}`, `${{ secrets.TOKEN }}`,
 * `{{ vault_password }}`, `%DB_PASSWORD%`, `$(cat /run/secrets/db)`, `<your password>`; an environment
 * variable's name (capitals, digits and `_`, each part starting with a capital: `OPENAI_API_KEY`), alone
 * or at the end of a dotted path (`process.env.DB_PASSWORD`, `secrets.GH_TOKEN`); a file's path
 * (`/etc/ssl/private/server.key`, `./key.pem`, `~/.ssh/id_ed25519`, `C:\keys\app.pfx`). Not a default
 * written into one (`${DB_PASSWORD:-hunter2}` is a secret).
 */
const REFERENCE = new RegExp(
  `^(?:${[
    /\$[A-Za-z_]\w*|\$\{[A-Za-z_][\w.]*\}|\$?\{\{[^{}]*\}\}|%[A-Za-z_]\w*%|\$\([^()]*\)|<[^<>]*>/.source, // written references
    /(?:[A-Za-z_$][\w$]*\.)*[A-Z][A-Z0-9]*(?:_[A-Z][A-Z0-9]*)+|(?:[A-Za-z_$][\w$]*\.)+[A-Z][A-Z0-9]*/.source, // environment names
    /(?:~|\.{1,2})?(?:\/[\w.@+-]+){2,}|(?:~|\.{1,2})\/[\w.@+-]+|[A-Za-z]:\\[\w .\\-]+/.source, // file paths
  ].join("|")})$`,
);
/**
 * An absolute path as a working directory reads (`/tmp`, `~/code`, `/Users/Jane Doe/code`, `C:\\work`):
 * see {@link memberSecretOk}. Its parts take letters, digits, spaces and `_ . @ + ~ ( ) ' , -` only: a
 * value with a password's symbols (`/Xk9#mQ2z`, `/hunter2!`) is not a directory's name. Each `\\`
 * between parts is required (a part's characters never match two ways: linear time; an optional one
 * after each part backtracked exponentially on a long part followed by another symbol).
 */
const WORKING_DIRECTORY = /^(?:~?\/(?:[\p{L}\p{N}_.@+~()',-][\p{L}\p{N}_ .@+~()',-]*(?:\/[\p{L}\p{N}_ .@+~()',-]+)*\/?)?|[A-Za-z]:\\(?:[\p{L}\p{N}_ .@+~()',-]+(?:\\[\p{L}\p{N}_ .@+~()',-]+)*\\?)?)$/u;
/** A whole version or version range (`v1.2.3`, `1.2.3-beta.1`, `^1.10.12`, `>=2.0`; not `3.14`, not `2.5Tr0ub4dor&3!`). */
const VERSION = /^(?:(?:[~^]|[<>]=?|=)\s*v?\d+(?:\.(?:\d+|[xX*]))*|v\d+(?:\.\d+)+|\d+(?:\.\d+){2,})(?:[-+][0-9A-Za-z.]+)?$/;
/** Names under which a number is a count or an id, not a PIN: `pass`, `db_pass`, `dbPass` (a test run's passes), `*token` (a tokenizer's token id). */
const COUNT_NAME = /pass(?:es)?$|token$/i;
/**
 * The secret-named names whose value a person chose (`password`, `pwd`, `pass`, `passphrase`,
 * `passcode`): any length is a secret (`1234`). Under the others (keys, tokens, secrets, cookies:
 * made by machines, 8 characters or more) a shorter value is not one: a model's or a lexer's token
 * (`"token": "Hel"` in logprobs), a dependency's version range (`"cookie": "^1.1.1"` in package.json).
 */
const CHOSEN_NAME = /(?:passw(?:or)?d|pwd|pass(?:phrase|code)?)s?$/i;

/**
 * Whether the whole value under the secret-named member `member` is a secret. It is, whatever its
 * characters (`P@ssw0rd123!`, `summer_2024`, `john.smith1985`, `sunshine`), of any length under a name
 * whose value a person chose (a PIN `1234` under `password`) and of 8 characters or more under the
 * others ({@link CHOSEN_NAME}), unless it says there is none ({@link NO_VALUE}), is a mask ({@link MASKED}), refers to a value kept
 * elsewhere ({@link REFERENCE}), is a whole version or version range, holds a placeholder, or is only digits under a
 * name that counts ({@link COUNT_NAME}). Something a pattern finds inside an exempt value (a URL's
 * password, a key shape) is still replaced by that pattern.
 */
function memberSecretOk(value: string, member: string): boolean {
  if (value.length < 8 && !CHOSEN_NAME.test(member)) return false;
  if (value.includes(MARK) || (value.includes("[") && HOLDS_PLACEHOLDER.test(value))) return false;
  if (NO_VALUE.test(value) || MASKED.test(value) || REFERENCE.test(value) || VERSION.test(value)) return false;
  // `PWD` is the working directory in an environment dump or a shell: an absolute path under it (`/tmp`,
  // `/Users/Jane Doe/code`, `C:\\work`) is that, not a password (the path rule above takes no spaces
  // and needs two parts).
  if (/^pwd$/i.test(member) && WORKING_DIRECTORY.test(value)) return false;
  return !(/^\d+$/.test(value) && COUNT_NAME.test(member));
}

const PATTERNS: Pattern[] = [
  // The token shapes the secret scrubber knows too (pipeline/key-shapes.ts: one list for both).
  // every shape holds 13 or more of [A-Za-z0-9_-] in one run (a JWT's first part: `eyJ` and 10) or a digit (`ya29.`)
  { kind: "secret", re: new RegExp(`${KEY_SHAPE_BEFORE}()(${KEY_SHAPES_SOURCE})${KEY_SHAPE_AFTER}`, "g"), needs: /[A-Za-z0-9_-]{13}|\d/ },
  { kind: "secret", re: /(\b(?:Bearer|Basic)\s+)([A-Za-z0-9._~+/-]{16,}=*)(?![A-Za-z0-9._~+/=-])/gi, accept: (v) => hasDigit(v), needs: /\d/ },
  { kind: "secret", re: /(\b[a-z][a-z0-9+.-]*:\/\/[^\s:/@"'\\]+:)([^\s@/"'\\]{3,})(?=@)/gi, needs: /:\/\// },
  {
    kind: "secret",
    re: new RegExp(`(${SECRET_WORD}(?![A-Za-z0-9_])(?:\\\\?["'\`])?\\s*[:=]\\s*(?:\\\\?["'\`])?)(${KEYED_VALUE_SOURCE})`, "gi"),
    accept: keyedOk,
    needs: /\d/,
  },
  {
    kind: "email",
    re: /(?<![A-Za-z0-9._%+-])()([A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,})(?![A-Za-z0-9-])/g,
    accept: (v) => !/^(?:git|no-?reply)@/i.test(v),
    identity: (v) => v.toLowerCase(),
    needs: /@/,
  },
  { kind: "card", re: /(?<![\w.+-])()(\d(?:[ -]?\d){12,18})(?![\w-]|\.\d)/g, accept: cardOk, identity: digitsOnly, needs: /\d/ },
  { kind: "ipv6", re: /(?<![\w:.])()([0-9A-Fa-f]{0,4}(?::[0-9A-Fa-f]{0,4}){2,7}(?::?\d{1,3}(?:\.\d{1,3}){3})?)(?![\w:]|\.\w)/g, accept: (v) => ipv6Ok(v), needs: /\d/ },
  { kind: "ipv4", re: /(?<![\w.])()(\d{1,3}(?:\.\d{1,3}){3})(?![\w-]|\.\w)/g, accept: ipv4Ok, needs: /\d/ },
  { kind: "phone", re: /(?<![\w+.-])()(\+\d{1,3}(?:[ .-]?\(?\d{1,4}\)?){2,5}|(?:\(\d{3}\) ?|\d{3}[-. ])\d{3}[-. ]\d{4})(?![\w-]|\.\d)/g, accept: (v) => phoneOk(v) && (v.startsWith("+") || /^\(?[2-9]/.test(v)), identity: digitsOnly, needs: /\d/ },
];

/**
 * Whether a text may hold something a pattern finds: the union of the patterns' `needs` (made from
 * PATTERNS, so a pattern added there is covered), with a private-key block's marker line. A text
 * that fails it (most of a JSON log's literals: `info`, `ok`, its member names) is not searched by
 * each pattern in turn; a value under a secret-named member and remembered secrets are looked for anyway.
 */
const NO_PATTERNS: Pattern[] = [];
const MAY_MATCH = new RegExp([...new Set(PATTERNS.map((p) => p.needs.source)), "PRIVATE KEY-----"].join("|"));

/** A placeholder's shape as written in a prompt, e.g. `[EMAIL_1]`. */
const PLACEHOLDER_SHAPE = /\[(?:SECRET|EMAIL|CARD|IPV6|IPV4|PHONE)_\d+\]/g;
const HOLDS_PLACEHOLDER = /\[(?:SECRET|EMAIL|CARD|IPV6|IPV4|PHONE)_\d+\]/;

/** A found value's marker: MARK, its index in private-use digits (U+E010 is 0), MARK_END. */
const MARK = "\uE000";
const MARK_END = "\uE001";
const MARKER = /\uE000([\uE010-\uE019]+)\uE001/g;
const markDigits = (n: number) => String(n).replace(/\d/g, (d) => String.fromCharCode(0xe010 + d.charCodeAt(0) - 48));
const readMarkDigits = (s: string) => Number(s.replace(/[\uE010-\uE019]/g, (c) => String.fromCharCode(c.charCodeAt(0) - 0xe010 + 48)));

/**
 * Replaces PII in texts with placeholders stable across every text it is given (one instance per
 * request; give it the texts in body order). Counts replacements by kind. A placeholder never repeats
 * text already in the prompt: a number whose placeholder this text or an earlier one holds literally
 * (`[EMAIL_1]` in a prompt about templates) is skipped, so the model can tell that text from a replaced value and the reply's
 * literal `[EMAIL_1]` is not mapped back to an address (newuser11's tryout).
 */
export class Redactor {
  private readonly seen = new Map<string, string>();
  /** Placeholder-shaped text the prompt holds as written: not given out. */
  private readonly taken = new Set<string>();
  private readonly next: Record<string, number> = {};
  /** Each placeholder given, with its key in `seen`, in the order given. */
  private readonly given: Array<[string, string]> = [];
  /** Replacements made so far, by kind (each occurrence counts). */
  readonly counts: Partial<Record<RedactionKind, number>> = {};
  /** Placeholder → the kind and the original text first replaced by it (for mapping the reply back, S-3). */
  readonly originals = new Map<string, PlaceholderValue>();

  /**
   * @param known secret values restored in earlier replies (see {@link knownSecrets}), replaced wherever they stand
   * @param found called with each of those values found in a text (the memory keeps it longer: it is still in use)
   */
  constructor(
    private readonly known?: RegExp,
    private readonly found?: (value: string) => void,
  ) {}

  /**
   * `text` with every recognised value replaced by its placeholder. Its own placeholder-shaped text is
   * noted first, so neither it nor a later text is given a placeholder this text holds literally.
   * `member`: the name of the object member whose value `text` is (a tool-call argument's parameter
   * name, formats/codec.ts `TextSlot.member`); under a secret-named one (`password`, `api_key`) the
   * value is a secret as after `password: ` in plain text.
   */
  redact(text: string, member?: string): string {
    return this.run(text, member);
  }

  /**
   * An object member's name with the values in it replaced (an address used as a key), by every
   * pattern (a name that holds `password=…` holds a secret). `clash` says whether a name is already
   * one of that object's (a member as written, or one renamed before): a renamed name that clashes
   * (`Bob@Example.com` next to `bob@example.com`, both `[EMAIL_1]`; or next to a literal `[EMAIL_1]`)
   * gets placeholders of its own for its exact text instead (`[EMAIL_2]`, mapped back to that text), so
   * no member is lost or sent twice.
   */
  redactKey(name: string, clash?: (candidate: string) => boolean): string {
    const counted = clash && { ...this.counts };
    const given = this.given.length;
    let out = this.run(name, undefined);
    for (let n = 1; out !== name && clash?.(out) && n <= 8; n++) {
      // counted once: as the last try found them
      for (const k of Object.keys(this.counts) as RedactionKind[]) if (counted![k] === undefined) delete this.counts[k];
      Object.assign(this.counts, counted);
      // numbers the try gave out are taken back (no number stays mapped to a value no text shows), and
      // the clashing name's own placeholder-shaped text is held back (a literal `[EMAIL_1]` written as
      // `\u005bEMAIL_1]` in JSON text, which reading the raw text for them missed)
      this.takeBack(given);
      this.reserve(out);
      this.salt = `\u0001${n}\u0001`;
      this.aliases = [];
      try {
        out = this.run(name, undefined);
      } finally {
        this.salt = undefined;
      }
    }
    // a value whose number was taken back is known by the one its exact text got (one number, not two)
    if (this.aliases) for (const [key, ph] of this.aliases) if (!this.seen.has(key)) this.seen.set(key, ph);
    this.aliases = undefined;
    return out;
  }

  /** During a try with {@link salt}: each value's key without the salt, and the placeholder it got. */
  private aliases: Array<[string, string]> | undefined;

  /**
   * Whether `text`, as the value of the object member `member`, is one secret as a whole (a secret-named
   * member, {@link memberSecretOk}): such a value is redacted whole even when it is itself a JSON
   * document (`{"credentials": "{\"type\": …}"}`), as it is in JSON-text arguments.
   */
  wholeSecret(text: string, member: string): boolean {
    if (!this.secretNamed(member)) return false;
    const at = memberValue(text);
    return at !== undefined && memberSecretOk(text.slice(at[0], at[1]), member);
  }

  /**
   * A JSON number's text redacted as {@link redact} does; a placeholder that took its place whole is
   * marked as standing for a number ({@link PlaceholderValue.number}: restored unquoted).
   */
  numberText(text: string, member?: string): string {
    this.numberOf = text;
    let out: string;
    try {
      out = this.run(text, member);
    } finally {
      this.numberOf = undefined;
    }
    const o = out === text ? undefined : this.originals.get(out);
    if (o?.value === text) o.number = true;
    return out;
  }

  /** While set, the JSON number's text being redacted: a value that is all of it is keyed apart from the same text as a string (see {@link placeholder}). */
  private numberOf: string | undefined;

  /**
   * Holds back the placeholder-shaped text `text` holds (`[EMAIL_1]` in a template), so that no value is
   * given its number: for a whole that is redacted a part at a time (a JSON text, one tool call's input),
   * called with the whole before its parts, as {@link redact} does for one text.
   */
  reserve(text: string): void {
    if (text.includes("[")) for (const m of text.matchAll(PLACEHOLDER_SHAPE)) this.taken.add(m[0]);
  }

  /**
   * Undoes the placeholders given since `given` of them were; each kind's numbering goes on from its
   * lowest number undone (the numbers below it that it skipped were taken: still skipped).
   */
  private takeBack(given: number): void {
    if (this.given.length === given) return;
    for (const [ph, key] of this.given.splice(given)) {
      const kind = this.originals.get(ph)!.kind;
      const n = Number(ph.slice(ph.lastIndexOf("_") + 1, -1));
      if (n - 1 < (this.next[kind] ?? 0)) this.next[kind] = n - 1;
      this.originals.delete(ph);
      this.seen.delete(key);
    }
  }

  /** Member names looked at so far → whether each is secret-named (a JSON log repeats its few names on every line). */
  private named: Map<string, boolean> | undefined;

  /** Whether an object member's name is secret-named (`password`, `api_key`, `auth_token`, …: see {@link SECRET_NAME}). */
  secretNamed(member: string): boolean {
    const named = (this.named ??= new Map());
    let is = named.get(member);
    if (is === undefined) named.set(member, (is = SECRET_NAME.test(member) || CAMEL_SECRET_NAME.test(member)));
    return is;
  }

  /** While set, values get placeholders of their own for their exact text (see {@link redactKey}). */
  private salt: string | undefined;

  private run(text: string, member: string | undefined): string {
    if (text.includes("_")) for (const m of text.matchAll(PLACEHOLDER_SHAPE)) this.taken.add(m[0]);
    // Each value found is first a marker (private-use characters no pattern takes as part of a value),
    // numbered afterwards in text order; a text that holds the marker character itself is numbered as found.
    const found: Array<[RedactionKind, string, string]> = [];
    const mark = text.includes(MARK)
      ? (kind: RedactionKind, identity: string, value: string) => this.placeholder(kind, identity, value)
      : (kind: RedactionKind, identity: string, value: string) => MARK + markDigits(found.push([kind, identity, value]) - 1) + MARK_END;
    const searched = MAY_MATCH.test(text);
    // PEM private-key blocks first, by two searches (a lazy regex across lines was quadratic, review15 R0)
    let out = searched ? replacePrivateKeyBlocks(text, (block) => mark("secret", block, block)) : text;
    // (found by index, not a regex: one with white space around a lazy middle backtracked for seconds)
    const at = member !== undefined && this.secretNamed(member) ? memberValue(out) : undefined;
    if (at) {
      const value = out.slice(at[0], at[1]);
      if (memberSecretOk(value, member!)) out = out.slice(0, at[0]) + mark("secret", value, value) + out.slice(at[1]);
    }
    for (const p of searched ? PATTERNS : NO_PATTERNS) {
      p.re.lastIndex = 0;
      out = out.replace(p.re, (match: string, keep: string, value: string, offset: number, whole: string) => {
        if (value.includes(MARK) || (value.includes("[") && HOLDS_PLACEHOLDER.test(value))) return match; // already replaced (a URL password that was a token)
        if (p.accept && !p.accept(value, whole.slice(Math.max(0, offset - 24), offset))) return match;
        return keep + mark(p.kind, p.identity ? p.identity(value) : value, value);
      });
    }
    if (this.known) {
      this.known.lastIndex = 0;
      out = out.replace(this.known, (value) => {
        this.found?.(value);
        return mark("secret", value, value);
      });
    }
    if (found.length === 0) return out;
    return out.replace(MARKER, (m: string, digits: string) => {
      const f = found[readMarkDigits(digits)];
      return f ? this.placeholder(f[0], f[1], f[2]) : m;
    });
  }

  private placeholder(kind: RedactionKind, identity: string, value: string): string {
    this.counts[kind] = (this.counts[kind] ?? 0) + 1;
    // a whole JSON number is keyed apart from the same text as a string (`"pin": 1234` and `"pin": "1234"`):
    // each has a placeholder of its own, restored in its own type (one was restored unquoted for both)
    const num = this.numberOf === value ? "\u0002" : "";
    const key = this.salt === undefined ? `${kind}\u0000${num}${identity}` : `${kind}\u0000${this.salt}${num}${value}`;
    let ph = this.seen.get(key);
    if (!ph) {
      do {
        const n = (this.next[kind] = (this.next[kind] ?? 0) + 1);
        ph = `[${LABEL[kind]}_${n}]`;
      } while (this.taken.has(ph));
      this.seen.set(key, ph);
      this.originals.set(ph, { kind, value });
      this.given.push([ph, key]);
    }
    if (this.salt !== undefined) this.aliases?.push([`${kind}\u0000${identity}`, ph]);
    return ph;
  }
}

const encoder = new TextEncoder();

/**
 * The redact stage (see the module doc). With `settings.enabled`, rewrites `ctx.body` in place (a copy
 * of it when an event transport handed the body over, `ctx.received`), and
 * when anything was replaced also `ctx.rawBody` (re-serialised), `ctx.trace.redactions` (counts by
 * kind) and `ctx.restoration` (placeholders to map back in the reply, counted in `ctx.trace.restored`); drops a parsed hub form so later stages see the redacted text. `settings` undefined means off.
 * Never throws.
 */
export function redact(ctx: RequestContext, settings: RedactionSettings | undefined, memories?: RestoredSecretMemories): void {
  if (settings?.enabled) redactBody(ctx, memories?.forKey(ctx.key ? keyId(ctx.key) : undefined));
}

/** Per memory (one per client key), the regex last built and the values it was built from. */
const knownCache = new WeakMap<RestoredSecrets, { values: readonly string[]; re: RegExp }>();

/**
 * One regex for the values `memory` holds (longest first, each standing alone: no letter or digit
 * right before or after it), made again only when its set changed; undefined when it holds none.
 * About 6 ms per MB of prompt text with 256 values; building it costs up to ~140 ms for a key holding its 262,144
 * characters (measured 2026-12-07, busy 2-core machine), once per change of the set.
 */
function knownSecrets(memory: RestoredSecrets | undefined): RegExp | undefined {
  const values = memory?.values();
  if (!values || values.length === 0) return undefined;
  const cached = knownCache.get(memory!);
  if (cached?.values === values) return cached.re;
  const alts = [...values].sort((a, b) => b.length - a.length).map((v) => v.replace(/[.*+?^${}()|[\]\\/-]/g, "\\$&"));
  const re = new RegExp(`(?<![A-Za-z0-9])(?:${alts.join("|")})(?![A-Za-z0-9])`, "g");
  knownCache.set(memory!, { values, re });
  return re;
}

/** Whether `text` may be a JSON document (its first character other than white space is `{` or `[`), by character code: most texts are not looked at further. */
function mayBeDocument(text: string): boolean {
  const c = text.charCodeAt(0);
  return c === 0x7b || c === 0x5b || (c <= 0x20 && /^\s*[[{]/.test(text));
}

/**
 * {@link redact} with redaction on: a function of its own, so that its callbacks (which hold its
 * variables) do not make every request allocate their scope while redaction is off (JavaScriptCore
 * makes a function's captured variables at its entry: docs/performance.md item 255).
 */
function redactBody(ctx: RequestContext, memory: RestoredSecrets | undefined): void {
  const promptText = codecFor(ctx.clientFormat).promptText;
  const known = knownSecrets(memory);
  const r = new Redactor(known, known && ((value: string) => memory!.remember(value)));
  // numbers are looked at under secret-named members (a PIN under `password`) and when they are card numbers
  const numbers = numberSlots((name) => r.secretNamed(name));
  const slots = promptText?.(ctx.body, numbers) ?? [];
  // Names a redaction left as they were (a tool result's `ts`, `level`, `msg` on every line): not looked at again.
  const plainNames = new Set<string>();
  const redactKey = (name: string, clash?: (candidate: string) => boolean) => {
    if (plainNames.has(name)) return name;
    const out = r.redactKey(name, clash);
    if (out === name) plainNames.add(name);
    return out;
  };
  // Per object: its members' names as written, and the names given to renamed ones (no two members may end up with one name).
  let names: Map<object, { written: Set<string>; given: Set<string> }> | undefined;
  const memberName = (slot: TextSlot): string => {
    if (!names) {
      names = new Map();
      for (const s of slots) if (s.objectKey && s.owner) names.get(s.owner)?.written.add(s.text) ?? names.set(s.owner, { written: new Set([s.text]), given: new Set() });
    }
    const own = slot.owner && names.get(slot.owner);
    if (!own) return redactKey(slot.text);
    const name = redactKey(slot.text, (c) => own.written.has(c) || own.given.has(c));
    if (name !== slot.text) own.given.add(name);
    return name;
  };
  // A text that is a JSON document (a tool result from an MCP server) is redacted on its decoded values:
  // as text, a value right after an escaped `\n` was missed, or the `n` joined it (`\[EMAIL_1]`). So is
  // a string value inside one, or inside JSON-text arguments, that is a JSON document itself (an MCP
  // result's `text`, a `{"body": "{…}"}` argument: the IP after `\n` went in clear). Not the value of a
  // secret-named member, which is one secret whatever it holds. (A document is redacted a string literal
  // at a time: placeholder-shaped text anywhere in it is held back first, as written and as the model
  // reads it inside its strings: `"Dear \u005bEMAIL_1]"` is `Dear [EMAIL_1]`, in a JSON document inside
  // one too.)
  const reserveJson = (text: string) => {
    r.reserve(text);
    escapedLiterals(text, (decoded) => r.reserve(decoded));
  };
  const plainText = (text: string, member?: string, number?: boolean): string => {
    if (number) return r.numberText(text, member);
    if (!mayBeDocument(text) || (member !== undefined && r.wholeSecret(text, member))) return r.redact(text, member);
    reserveJson(text);
    return redactJsonDocument(text, plainText, redactKey) ?? r.redact(text, member);
  };
  // Per group of slots (one tool call's input, one structured tool result), the placeholder-shaped texts
  // its slots hold: held back at its first slot, so no value of it is given a number it writes literally.
  let groups: Map<object, string[]> | undefined;
  let lastGroup: object | undefined;
  const reserveGroup = (group: object) => {
    if (group === lastGroup) return;
    lastGroup = group;
    if (!groups) {
      groups = new Map();
      for (const s of slots) if (s.group && (s.text.includes("[") || s.text.includes("\\u"))) groups.get(s.group)?.push(s.text) ?? groups.set(s.group, [s.text]);
    }
    const texts = groups.get(group);
    if (!texts) return;
    groups.delete(group);
    for (const t of texts) {
      if (mayBeDocument(t)) reserveJson(t);
      else r.reserve(t);
    }
  };
  const next = slots.map((slot) => {
    if (slot.json) {
      reserveJson(slot.text);
      return redactJsonText(slot.text, plainText, redactKey);
    }
    if (slot.group) reserveGroup(slot.group);
    if (slot.objectKey) return memberName(slot);
    const member = slot.item ? itemMember(slot.member) : slot.member;
    if (slot.number) return r.numberText(slot.text, member);
    return plainText(slot.text, member);
  });
  if (next.every((text, i) => text === slots[i].text)) return;
  // SPEC O-6: the recording's client request is what the client sent, not the redacted body
  ctx.recording?.clientBody(bodyBytes(ctx));
  // A body an event transport handed over is shared with it (the Responses socket keeps its input items
  // for `previous_response_id`, SPEC 2.5): rewrite a copy, so the transport keeps what the client sent.
  if (ctx.received) ctx.body = structuredClone(ctx.body);
  const targets = ctx.received ? (promptText?.(ctx.body, numbers) ?? []) : slots;
  targets.forEach((slot, i) => {
    if (next[i] !== slot.text) slot.set(next[i]);
  });
  for (const slot of targets) slot.commit?.();
  ctx.rawBody = encoder.encode(JSON.stringify(ctx.body));
  ctx.hub = undefined;
  ctx.trace.redactions = { ...r.counts } as Record<string, number>;
  const counts: Record<string, number> = {};
  ctx.trace.restored = counts;
  ctx.restoration = { placeholders: r.originals, counts, memory };
}
