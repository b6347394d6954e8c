/**
 * Conversation affinity keys (SPEC A-2, 2.4): which conversation a request belongs to, so the account
 * pool can send it back to the account that last answered it (the provider's prompt cache stays warm).
 *
 * - An explicit session header wins, first present in this order (SPEC 2.4): `X-Switchyard-Session`,
 *   `X-Session-Id`, `X-Conversation-Id`, `X-Session-Affinity`, `Session-Id` (also Codex's `session-id`),
 *   then Claude Code's own `x-claude-code-session-id`.
 * - Otherwise a fingerprint of (model, start of the system prompt, tool names, first user message),
 *   read from the hub form when a stage parsed it, else straight from the client's JSON body (Chat,
 *   Messages, Responses, Gemini): a native-lane request is not parsed into the hub just for its fingerprint.
 *
 * Keys are hashed (SHA-256, hex, 32 chars; a fingerprint over `<length>:<text>` fields) with a kind
 * prefix (`s:` session, `f:` fingerprint): they are stored in the database and must never carry prompt
 * text or a client's header value in clear.
 * Pure functions, and {@link affinityHints}: the pick hints of one request.
 */
import { isObj } from "../formats/json.ts";
import type { HubMessage, HubRequest, WireFormat } from "../formats/hub.ts";
import { clientHeadersOf, tryHubOf, type RequestContext } from "./context.ts";
import type { HeaderReader } from "./client-headers.ts";
import type { PickHints } from "./pick.ts";

/** Session headers in precedence order (SPEC 2.4); lower-case, as `Headers` compares them. */
export const SESSION_HEADERS = [
  "x-switchyard-session",
  "x-session-id",
  "x-conversation-id",
  "x-session-affinity",
  "session-id",
  "x-claude-code-session-id",
] as const;

/** Characters of the system prompt that enter the fingerprint (its start: the stable part). */
export const SYSTEM_PREFIX_CHARS = 2000;
/** Characters of the first user message that enter the fingerprint. */
export const FIRST_USER_CHARS = 2000;

/** The first session header present (non-empty) and its value, or undefined. */
export function sessionHeader(headers: HeaderReader): { name: string; value: string } | undefined {
  for (const name of SESSION_HEADERS) {
    const v = headers.get(name)?.trim();
    if (v) return { name, value: v };
  }
  return undefined;
}

function hash(text: string): string {
  return Bun.SHA256.hash(text, "hex").slice(0, 32);
}

/**
 * Text read for one field of the fingerprint, as references to the request's own strings (nothing
 * joined or copied while reading): reading stops once `cap` UTF-16 units are collected, and the field
 * is cut to `cap` when hashed ({@link cut}).
 */
class Pieces {
  readonly list: string[] = [];
  private len = 0;
  constructor(readonly cap: number) {}
  /** Adds a piece; false once the cap is reached (read no further). */
  add(s: string): boolean {
    this.list.push(s);
    this.len += s.length;
    return this.len < this.cap;
  }
  get empty(): boolean {
    return this.len === 0;
  }
  /** Length of the field as hashed: the pieces joined and cut at the cap ({@link cut}). */
  get cutLength(): number {
    return this.len < this.cap ? this.len : this.cap;
  }
}

/** What the fingerprint reads of a conversation. */
interface ConversationParts {
  system: Pieces;
  tools: string[];
  firstUser: Pieces;
}

/** Hub message text: text parts, a tool result's text, `[type]` for any other part (images, calls…); false when `out` is full. */
function hubText(m: HubMessage, out: Pieces): boolean {
  for (const p of m.content) {
    if (p.type === "text") {
      if (!out.add(p.text)) return false;
    } else if (p.type === "tool_result") {
      for (const c of p.content) if (c.type === "text" && !out.add(c.text)) return false;
    } else if (!out.add(`[${p.type}]`)) return false;
  }
  return true;
}

function hubParts(hub: HubRequest): ConversationParts {
  let system = new Pieces(SYSTEM_PREFIX_CHARS);
  for (let i = 0; i < hub.system.length; i++) {
    if ((i > 0 && !system.add("\n")) || !system.add(hub.system[i]!.text)) break;
  }
  if (system.empty) {
    system = new Pieces(SYSTEM_PREFIX_CHARS);
    for (const m of hub.messages) {
      if ((m.role !== "system" && m.role !== "developer") || !hubText(m, system) || !system.add("\n")) break;
    }
  }
  const tools = hub.tools.map((t) => (t.kind === "function" ? t.name : (t.name ?? String(t.raw.type ?? "provider-tool"))));
  const firstUser = new Pieces(FIRST_USER_CHARS);
  const user = hub.messages.find((m) => m.role === "user");
  if (user) hubText(user, firstUser);
  return { system, tools, firstUser };
}

/** The pieces joined, cut at `cap` UTF-16 units: a string of at most `cap` (JavaScript concatenation). */
function cut(pieces: Pieces): string {
  const cap = pieces.cap;
  let out = "";
  for (const p of pieces.list) {
    const left = cap - out.length;
    if (left <= 0) break;
    out += p.length > left ? p.slice(0, left) : p;
  }
  return out;
}

/**
 * SHA-256 of the four parts, each field written as `<length>:<text>` (so no two part lists give the
 * same bytes), the prefix and the text already cut, hashed in one call. Not JSON: `JSON.stringify`
 * escapes every newline and quote of a prompt character by character, which measured as the larger
 * part of the fingerprint's cost on a real system prompt. A conversation fingerprinted recently is
 * found in {@link recentFingerprints} without building that text.
 */
function hashParts(model: string, parts: ConversationParts): string {
  // The conversation found or remembered last, checked first: consecutive requests of one conversation
  // need neither the memo's index nor its lookup (an exact check, as for any entry).
  const last = lastFingerprinted;
  if (last !== undefined && last.holds(model, parts)) return last.key;
  const { system, tools, firstUser } = parts;
  // The memo is looked up only when the text could be in it: every field's characters count.
  let chars = model.length + system.cutLength + firstUser.cutLength;
  for (let i = 0; i < tools.length && chars <= FINGERPRINT_MEMO_MAX_CHARS; i++) chars += tools[i]!.length;
  const remembered = chars <= FINGERPRINT_MEMO_MAX_CHARS;
  const index = remembered ? crcPieces(firstUser, crcPieces(system, Bun.hash.crc32(model))) ^ tools.length : 0;
  if (remembered) {
    const known = recentFingerprints.get(index);
    if (known !== undefined && known.holds(model, parts)) {
      lastFingerprinted = known;
      return known.key;
    }
  }
  const sys = cut(system);
  const user = cut(firstUser);
  let text = `${model.length}:${model}${sys.length}:${sys}${tools.length}:`;
  for (const t of tools) text += `${t.length}:${t}`;
  const userAt = text.length + `${user.length}:`.length;
  text += `${user.length}:${user}`;
  const key = "f:" + Bun.SHA256.hash(text, "hex").slice(0, 32);
  if (remembered && text.length <= FINGERPRINT_MEMO_MAX_CHARS) {
    // A text already there under this index (another conversation whose index is the same) is replaced.
    if (!recentFingerprints.delete(index) && recentFingerprints.size >= FINGERPRINT_MEMO_ENTRIES) recentFingerprints.delete(recentFingerprints.keys().next().value!);
    const sysAt = `${model.length}:${model}${sys.length}:`.length;
    const entry = new Fingerprinted(key, text, model, sysAt, sys.length, tools.slice(), userAt, user.length);
    recentFingerprints.set(index, entry);
    lastFingerprinted = entry;
  }
  return key;
}

/** CRC-32 (Bun's native one) of a field's pieces as they are hashed (cut at the cap), continuing `crc`. */
function crcPieces(pieces: Pieces, crc: number): number {
  let left = pieces.cap;
  for (const p of pieces.list) {
    if (left <= 0) break;
    crc = Bun.hash.crc32(p.length > left ? p.slice(0, left) : p, crc);
    left -= p.length;
  }
  return crc;
}

/** Whether `text` holds, from `at`, exactly the pieces as they are hashed (joined and cut at the cap). */
function piecesAt(text: string, at: number, pieces: Pieces): boolean {
  let left = pieces.cap;
  for (const p of pieces.list) {
    if (left <= 0) break;
    const s = p.length > left ? p.slice(0, left) : p;
    if (!text.startsWith(s, at)) return false;
    at += s.length;
    left -= p.length;
  }
  return true;
}

/**
 * A fingerprinted conversation in {@link recentFingerprints}: its key and the exact text it is the
 * digest of, with where the system prompt and first user message are in it.
 */
class Fingerprinted {
  constructor(
    readonly key: string,
    private readonly text: string,
    private readonly model: string,
    private readonly sysAt: number,
    private readonly sysLen: number,
    private readonly tools: string[],
    private readonly userAt: number,
    private readonly userLen: number,
  ) {}

  /**
   * Whether these parts are exactly the ones this key was hashed from: the same model, tool names and
   * field lengths, and the same characters of the system prompt and first user message (compared in
   * place, nothing joined), so that the text {@link hashParts} would hash is this very text.
   */
  holds(model: string, parts: ConversationParts): boolean {
    const { system, tools, firstUser } = parts;
    if (model !== this.model || system.cutLength !== this.sysLen || firstUser.cutLength !== this.userLen || tools.length !== this.tools.length) return false;
    for (let i = 0; i < tools.length; i++) if (tools[i] !== this.tools[i]) return false;
    return piecesAt(this.text, this.userAt, firstUser) && piecesAt(this.text, this.sysAt, system);
  }
}

/** How many fingerprinted texts {@link recentFingerprints} keeps (the oldest is dropped first). */
export const FINGERPRINT_MEMO_ENTRIES = 64;
/** Longest fingerprinted text (UTF-16 units) kept there: with both prefixes cut at 2,000 only a long tool list is longer. */
export const FINGERPRINT_MEMO_MAX_CHARS = 16_384;
/**
 * The keys of recently fingerprinted conversations: every request of a conversation without a session
 * header has the same parts (that is what makes it one conversation). An entry is found by a CRC-32 of
 * the model, the system prompt's and first user message's pieces as hashed (Bun's native CRC over the
 * request's own strings, the tool count mixed in) and returned only when the parts are exactly those
 * its key was hashed from ({@link Fingerprinted.holds}): an exact-match memo, so keys do not change.
 * Item 70 of docs/performance.md looked the joined text up (JavaScriptCore flattening and hashing it);
 * item 80 finds it without joining. Bounded to {@link FINGERPRINT_MEMO_ENTRIES} texts of at most
 * {@link FINGERPRINT_MEMO_MAX_CHARS} (≤ ~2 MB, a few hundred kB with typical prompts); in memory only,
 * never stored or logged. Two conversations with the same index take turns in one entry.
 */
const recentFingerprints = new Map<number, Fingerprinted>();
/**
 * The entry of {@link recentFingerprints} found or added last, which {@link hashParts} checks before
 * computing the memo's index (the CRC-32s of the system prompt and first user message, about two thirds
 * of a remembered conversation's lookup): every request of a client working in one conversation finds it
 * there. Returned only when it holds exactly the request's parts, like any entry; an entry dropped from
 * the memo since is still its text's key (at most one more text in memory).
 */
let lastFingerprinted: Fingerprinted | undefined;

/**
 * The conversation fingerprint (SPEC A-2): SHA-256 over the requested model, the first
 * {@link SYSTEM_PREFIX_CHARS} characters of the system prompt (top-level system blocks joined by a
 * newline, else the leading system/developer turns, each followed by one), the tool names in order,
 * and the first {@link FIRST_USER_CHARS} characters of the first user message (its text parts, the text
 * of its tool results, `[type]` for any other part). Later turns do not change it, so every request of
 * one conversation maps to the same key. Returns `f:` + 32 hex chars.
 */
export function conversationFingerprint(hub: HubRequest, model: string): string {
  return hashParts(model, hubParts(hub));
}

type Json = Record<string, unknown>;
/** Thrown by a body reader for a shape it does not read like the format's parser: the hub is used instead. */
const UNREAD = Symbol("unread");

/**
 * Chat text of a system/developer or user message, as formats/openai-chat/parse.ts maps it to hub
 * parts: a non-empty string, or `text`/`input_text`/`refusal` parts (empty ones dropped). Any other
 * part (images, audio, files) is left to the hub.
 */
function chatText(content: unknown, out: Pieces): boolean {
  if (content === null || content === undefined) return true;
  if (typeof content === "string") return content.length === 0 || out.add(content);
  if (!Array.isArray(content)) throw UNREAD;
  for (const p of content) {
    if (!isObj(p)) throw UNREAD;
    const t = p.type === "refusal" ? p.refusal : p.type === "text" || p.type === "input_text" ? p.text : UNREAD;
    if (typeof t !== "string") throw UNREAD;
    if (t.length > 0 && !out.add(t)) return false;
  }
  return true;
}

/** Chat Completions body (formats/openai-chat/parse.ts): leading system/developer messages, tools, first user message. */
function chatParts(b: Json): ConversationParts {
  const messages = b.messages;
  if (!Array.isArray(messages)) throw UNREAD;
  const system = new Pieces(SYSTEM_PREFIX_CHARS);
  let i = 0;
  let reading = true;
  for (; i < messages.length; i++) {
    const m = messages[i];
    if (!isObj(m)) throw UNREAD;
    if (m.role !== "system" && m.role !== "developer") break;
    // Past the cap the rest of the system turns is skipped, not read.
    if (reading) reading = chatText(m.content, system) && system.add("\n");
  }
  const firstUser = new Pieces(FIRST_USER_CHARS);
  for (; i < messages.length; i++) {
    const m = messages[i];
    if (!isObj(m)) throw UNREAD;
    // A tool message before any user message is a user turn of tool results in the hub.
    if (m.role === "tool" || m.role === "function") throw UNREAD;
    if (m.role === "user") {
      chatText(m.content, firstUser);
      break;
    }
  }
  const tools: string[] = [];
  if (b.tools !== undefined && b.tools !== null) {
    if (!Array.isArray(b.tools)) throw UNREAD;
    for (const t of b.tools) {
      if (!isObj(t)) throw UNREAD;
      if (t.type === "function" && t.function) {
        if (!isObj(t.function) || typeof t.function.name !== "string") throw UNREAD;
        tools.push(t.function.name);
      } else {
        const name = isObj(t.custom) && typeof t.custom.name === "string" ? t.custom.name : typeof t.name === "string" ? t.name : undefined;
        tools.push(name ?? String(t.type ?? "provider-tool"));
      }
    }
  }
  return { system, tools, firstUser };
}

/**
 * Anthropic message text, as formats/anthropic-messages/parse.ts maps it to hub parts: a non-empty
 * string, text blocks, the text of tool results; blocks the hub has no slot for are skipped. Images,
 * documents, tool calls and thinking are left to the hub.
 */
function messagesText(content: unknown, out: Pieces): boolean {
  if (typeof content === "string") return content.length === 0 || out.add(content);
  if (!Array.isArray(content)) throw UNREAD;
  for (const b of content) {
    if (!isObj(b)) throw UNREAD;
    switch (b.type) {
      case "text":
        if (typeof b.text !== "string") throw UNREAD;
        if (!out.add(b.text)) return false;
        break;
      case "tool_result": {
        if (typeof b.tool_use_id !== "string") throw UNREAD;
        const c = b.content;
        if (typeof c === "string") {
          if (c.length > 0 && !out.add(c)) return false;
        } else if (Array.isArray(c)) {
          for (const r of c) {
            if (!isObj(r)) continue;
            if (r.type === "image" || r.type === "document") throw UNREAD;
            if (r.type === "text" && typeof r.text !== "string") throw UNREAD;
            if (typeof r.text === "string" && !out.add(r.text)) return false;
          }
        } else if (c !== undefined && c !== null) throw UNREAD;
        break;
      }
      case "image":
      case "document":
      case "tool_use":
      case "thinking":
      case "redacted_thinking":
        throw UNREAD;
      default:
        break; // server_tool_use, web_search_tool_result, …: no hub slot
    }
  }
  return true;
}

/** Anthropic Messages body (formats/anthropic-messages/parse.ts): system, leading system turns, tools, first user message. */
function messagesParts(b: Json): ConversationParts {
  const messages = b.messages;
  if (!Array.isArray(messages)) throw UNREAD;
  let system = new Pieces(SYSTEM_PREFIX_CHARS);
  if (typeof b.system === "string") {
    if (b.system.length > 0) system.add(b.system);
  } else if (Array.isArray(b.system)) {
    let blocks = 0;
    for (const blk of b.system) {
      if (!isObj(blk)) throw UNREAD;
      if (blk.type !== "text") continue;
      if (typeof blk.text !== "string") throw UNREAD;
      if ((blocks++ > 0 && !system.add("\n")) || !system.add(blk.text)) break;
    }
  } else if (b.system !== undefined && b.system !== null) throw UNREAD;
  const role = (m: unknown): string => {
    if (!isObj(m) || (m.role !== "user" && m.role !== "assistant" && m.role !== "system" && m.role !== "developer")) throw UNREAD;
    return m.role;
  };
  if (system.empty) {
    system = new Pieces(SYSTEM_PREFIX_CHARS);
    for (const m of messages) {
      const r = role(m);
      if (r !== "system" && r !== "developer") break;
      if (!messagesText(m.content, system) || !system.add("\n")) break;
    }
  }
  const firstUser = new Pieces(FIRST_USER_CHARS);
  for (const m of messages) {
    if (role(m) === "user") {
      messagesText(m.content, firstUser);
      break;
    }
  }
  const tools: string[] = [];
  if (b.tools !== undefined && b.tools !== null) {
    if (!Array.isArray(b.tools)) throw UNREAD;
    for (const t of b.tools) {
      if (!isObj(t)) throw UNREAD;
      if (t.type === undefined || t.type === null || t.type === "custom") {
        if (typeof t.name !== "string") throw UNREAD;
        tools.push(t.name);
      } else tools.push(typeof t.name === "string" ? t.name : String(t.type));
    }
  }
  return { system, tools, firstUser };
}

/**
 * Text of a Gemini user turn's parts, as formats/gemini/parse.ts maps them to hub parts: non-empty
 * `text` (a `thoughtSignature` on it does not change the text; an empty one adds nothing in a user
 * turn), parts naming no field the parser reads skipped. Thought text, function calls and responses,
 * media and code parts are left to the hub.
 */
function geminiUserText(parts: unknown[], out: Pieces): boolean {
  for (const p of parts) {
    if (!isObj(p)) continue;
    if (typeof p.text === "string") {
      if (p.thought === true) throw UNREAD;
      if (p.text.length > 0 && !out.add(p.text)) return false;
      continue;
    }
    if (p.functionCall !== undefined || p.functionResponse !== undefined || p.inlineData !== undefined || p.fileData !== undefined) throw UNREAD;
    if (p.executableCode !== undefined || p.codeExecutionResult !== undefined) throw UNREAD;
  }
  return true;
}

/** Fields of a Gemini part that can make a hub part (formats/gemini/parse.ts). */
const GEMINI_PART_FIELDS = ["text", "functionCall", "functionResponse", "inlineData", "fileData", "executableCode", "codeExecutionResult"] as const;

/**
 * Whether a Gemini model turn becomes a hub turn: true with text, thought text or a named call; false
 * when no part has a field the parser reads (no turn); a turn the reader cannot tell (an empty text with
 * a signature, media, code) is left to the hub.
 */
function geminiModelTurn(parts: unknown[]): boolean {
  let unsure = false;
  for (const p of parts) {
    if (!isObj(p)) continue;
    if (typeof p.text === "string" && (p.thought === true || p.text.length > 0)) return true;
    if (isObj(p.functionCall) && typeof p.functionCall.name === "string" && p.functionCall.name.length > 0) return true;
    if (!unsure) for (const f of GEMINI_PART_FIELDS) if (p[f] !== undefined) unsure = true;
  }
  if (unsure) throw UNREAD;
  return false;
}

/**
 * Gemini `GenerateContentRequest` (formats/gemini/parse.ts; countTokens' `generateContentRequest`
 * wrapper too): `systemInstruction` text parts, tool names (each function declaration's, else the
 * tool's member name), and the first user turn, which in the hub is every user content up to the
 * first model content that has something in it (consecutive contents of one role are one hub turn;
 * an empty one is no turn).
 */
function geminiParts(b: Json): ConversationParts {
  if (b.contents === undefined && isObj(b.generateContentRequest)) b = b.generateContentRequest;
  const contents = b.contents;
  if (!Array.isArray(contents) || contents.length === 0) throw UNREAD;
  const system = new Pieces(SYSTEM_PREFIX_CHARS);
  const si = b.systemInstruction;
  if (typeof si === "string") {
    if (si.length > 0) system.add(si);
  } else if (isObj(si)) {
    if (Array.isArray(si.parts)) {
      let blocks = 0;
      for (const p of si.parts) {
        if (!isObj(p) || typeof p.text !== "string" || p.text.length === 0) continue;
        if ((blocks++ > 0 && !system.add("\n")) || !system.add(p.text)) break;
      }
    }
  } else if (si !== undefined && si !== null) throw UNREAD;
  const firstUser = new Pieces(FIRST_USER_CHARS);
  for (const c of contents) {
    if (!isObj(c) || !Array.isArray(c.parts)) throw UNREAD;
    const role = c.role === undefined || c.role === null || c.role === "" ? "user" : c.role;
    if (role === "model") {
      // Every part a user turn has goes into `firstUser` (or is left to the hub), so a non-empty
      // `firstUser` means the first user turn has begun; a model turn with content ends it.
      if (!firstUser.empty && geminiModelTurn(c.parts)) break;
      continue;
    }
    if (role !== "user" && role !== "function") throw UNREAD;
    if (!geminiUserText(c.parts, firstUser)) break;
  }
  const tools: string[] = [];
  if (b.tools !== undefined && b.tools !== null) {
    if (!Array.isArray(b.tools)) throw UNREAD;
    for (const t of b.tools) {
      if (!isObj(t)) continue;
      for (const key in t) {
        const value = t[key];
        if (key !== "functionDeclarations") {
          if (value !== undefined && value !== null) tools.push(key);
          continue;
        }
        if (!Array.isArray(value)) throw UNREAD;
        for (const d of value) {
          if (!isObj(d) || typeof d.name !== "string" || d.name.length === 0) throw UNREAD;
          tools.push(d.name);
        }
      }
    }
  }
  return { system, tools, firstUser };
}

/**
 * Text of a Responses message item's `content`, as formats/openai-responses/parse.ts maps it to hub
 * text parts: a string (an empty one too), `input_text` / `output_text` / `text` parts. Any other part
 * (images, files, audio, refusals) is left to the hub.
 */
function responsesText(content: unknown, out: Pieces): boolean {
  if (typeof content === "string") return out.add(content);
  if (!Array.isArray(content)) throw UNREAD;
  for (const p of content) {
    if (!isObj(p) || (p.type !== "input_text" && p.type !== "output_text" && p.type !== "text") || typeof p.text !== "string") throw UNREAD;
    if (!out.add(p.text)) return false;
  }
  return true;
}

/**
 * OpenAI Responses body (formats/openai-responses/parse.ts): `instructions` (a string), else the
 * leading system and developer message items; tool names (a function tool's, any other tool's `name`
 * or type); the first user message item (or `input` as a string). Items before the first user message
 * other than system and developer messages (an assistant turn, calls and their outputs, which the hub
 * groups into turns) and `instructions` as items are left to the hub. A namespace tool counts its own
 * name, then its function members' (the hub flattens them after it).
 */
function responsesParts(b: Json): ConversationParts {
  let system = new Pieces(SYSTEM_PREFIX_CHARS);
  const instructions = b.instructions;
  if (typeof instructions === "string") {
    if (instructions.length > 0) system.add(instructions);
  } else if (instructions !== undefined && instructions !== null) throw UNREAD;
  const firstUser = new Pieces(FIRST_USER_CHARS);
  const input = b.input;
  if (typeof input === "string") firstUser.add(input);
  else if (Array.isArray(input)) {
    const leading = system.empty;
    if (leading) system = new Pieces(SYSTEM_PREFIX_CHARS);
    let reading = leading;
    for (const item of input) {
      if (!isObj(item) || (item.type !== undefined && item.type !== "message")) throw UNREAD;
      const role = item.role;
      if (role === "user") {
        responsesText(item.content, firstUser);
        break;
      }
      if (role !== "system" && role !== "developer") throw UNREAD;
      // The hub's leading system turns, while the system prompt was not given as `instructions`.
      if (reading) reading = responsesText(item.content, system) && system.add("\n");
    }
  } else if (input !== undefined && input !== null) throw UNREAD;
  const tools: string[] = [];
  if (b.tools !== undefined && b.tools !== null) {
    if (!Array.isArray(b.tools)) throw UNREAD;
    for (const t of b.tools) {
      if (!isObj(t)) throw UNREAD;
      if (t.type === "function") {
        if (typeof t.name !== "string") throw UNREAD;
        tools.push(t.name);
      } else if (t.type === "namespace") {
        // The hub holds the namespace (its name), then its function members, each by its own name.
        if (typeof t.name !== "string" || !Array.isArray(t.tools)) throw UNREAD;
        tools.push(t.name);
        for (const m of t.tools) {
          if (!isObj(m)) throw UNREAD;
          if (m.type !== "function") continue;
          if (typeof m.name !== "string") throw UNREAD;
          tools.push(m.name);
        }
      } else tools.push(typeof t.name === "string" ? t.name : String(t.type ?? "provider-tool"));
    }
  }
  return { system, tools, firstUser };
}

/** Body readers by client format (each falls back to the hub for a shape it does not read). */
const BODY_PARTS: Partial<Record<WireFormat, (b: Json) => ConversationParts>> = {
  "openai-chat": chatParts,
  "anthropic-messages": messagesParts,
  "openai-responses": responsesParts,
  gemini: geminiParts,
};

/**
 * The fingerprint of a request ({@link conversationFingerprint}'s value) from what is already parsed:
 * the hub form when a stage parsed it, else the fields it needs read straight from the client's JSON
 * body (Chat, Messages, Responses and Gemini; a shape the reader does not map like the format's parser, such as an
 * image in the first user message, falls back to the hub), else the hub parsed now. Undefined when the body
 * cannot be parsed (no affinity).
 */
export function requestFingerprint(ctx: RequestContext): string | undefined {
  const model = ctx.requestedModel;
  if (ctx.hub) return conversationFingerprint(ctx.hub, model);
  const read = BODY_PARTS[ctx.clientFormat];
  if (read) {
    try {
      return hashParts(model, read(ctx.body));
    } catch (e) {
      if (e !== UNREAD) throw e;
    }
  }
  const hub = tryHubOf(ctx);
  return hub ? conversationFingerprint(hub, model) : undefined;
}

/** The key of an explicit session header: `s:` + 32 hex chars (the header name does not matter). */
export function sessionKey(value: string): string {
  return "s:" + hash(value);
}

/**
 * The affinity key of a request: the session header's key when one is present, else the fingerprint
 * of the parsed body, else undefined (no body could be parsed: no affinity).
 */
export function affinityKey(headers: HeaderReader, hub: HubRequest | undefined, model: string): string | undefined {
  const s = sessionHeader(headers);
  if (s) return sessionKey(s.value);
  return hub ? conversationFingerprint(hub, model) : undefined;
}

/**
 * Pick hints for a request (SPEC A-2): the affinity key (session header, else conversation
 * fingerprint) and whether the combo addressed keeps cache affinity on (`cacheAffinity`, default
 * true). The key needs the parsed conversation: it is computed on first read (only providers with
 * several accounts read it), then kept.
 */
export function affinityHints(ctx: RequestContext, cacheAffinity = true): PickHints {
  return new RequestHints(ctx, cacheAffinity);
}

/**
 * {@link PickHints} whose affinity key is read from the request when first asked for, then kept. A class
 * (the getter on its prototype), not an object literal with `get`: one object per request instead of an
 * object, its getter pair, the getter function and the scope it closes over (issue 17).
 */
class RequestHints implements PickHints {
  private key: string | undefined;
  private computed = false;

  constructor(
    private readonly ctx: RequestContext,
    readonly affinity: boolean,
  ) {}

  get affinityKey(): string | undefined {
    if (!this.computed) {
      this.computed = true;
      const s = sessionHeader(clientHeadersOf(this.ctx));
      this.key = s ? sessionKey(s.value) : requestFingerprint(this.ctx);
    }
    return this.key;
  }

  /** The provider {@link keyAt} last made a key for, and that key. */
  private keyProvider: string | undefined;
  private providerKey: string | undefined;

  /**
   * {@link PickHints.keyAt}: made once per provider the request reaches (a fallback to another makes its
   * own). Kept by provider id alone: `make` must be the same function on every call (every caller passes
   * `bindingKey`).
   */
  keyAt(providerId: string, make: (providerId: string, affinityKey: string) => string): string | undefined {
    const key = this.affinityKey;
    if (!key) return undefined;
    if (this.keyProvider !== providerId || this.providerKey === undefined) {
      this.providerKey = make(providerId, key);
      this.keyProvider = providerId;
    }
    return this.providerKey;
  }
}
