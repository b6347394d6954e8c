/**
 * Small helpers shared by the Responses request, response, stream and tap code: id minting, usage
 * mapping (REFERENCE §5.10), stop-reason mapping (§5.1), data URLs (§5.5). Pure functions.
 */
import type { MediaSource, Opaque, ProviderFamily, StopReason, Usage } from "../hub.ts";
import { OPAQUE_TAG, readTaggedOpaque, writeTaggedOpaque } from "../hub.ts";
import { finiteNumber } from "../json.ts";
import { RandomText } from "../random-text.ts";
import { namespaceMemberTwice } from "../tool-kinds.ts";

/**
 * Mints a gateway id with the given prefix (`resp_`, `msg_`, `fc_`, `rs_`, `ctc_`). Uses
 * `newId(prefix)` when given (tests inject it) and makes sure the result carries the prefix;
 * otherwise `prefix` + 32 random hex chars (16 random bytes, as a dash-less random UUID's length; drawn
 * for many ids at once, formats/random-text.ts, docs/performance.md item 144). Prefixes are what OpenAI validates when ids are sent
 * back (REFERENCE §3.1, §7 item 3).
 */
/** 16 random bytes (32 hex chars) per minted id. */
const ITEM_RANDOM = new RandomText(16, 32, "hex");

export function mintId(prefix: string, newId?: (prefix: string) => string): string {
  if (newId) {
    const id = newId(prefix);
    return id.startsWith(prefix) ? id : prefix + id;
  }
  return prefix + ITEM_RANDOM.next();
}

/** True when `id` is an item id OpenAI can accept back for that item kind (REFERENCE §3.1). */
export function hasItemPrefix(id: string | undefined, prefix: "msg_" | "fc_" | "rs_" | "ctc_" | "lsh_"): id is string {
  return typeof id === "string" && id.startsWith(prefix) && id.length > prefix.length;
}

/**
 * Item-id prefixes a Responses backend accepts back on input items (REFERENCE §3.1): `msg_` messages,
 * `fc_` function calls, `fco_` function-call outputs (the Codex CLI mints these for its own outputs:
 * test/fixtures/shared/clients/codex-tool-use-2.json), `rs_` reasoning, `ctc_` custom tool calls, and
 * the hosted-tool items `ws_` (web search), `ci_` (code interpreter), `lsh_` (local shell), `mcp_`,
 * `ig_` (image generation), `cu_`/`cuo_` (computer use call/output). Any other id (minted by another
 * provider) is refused: OpenAI validates the prefix ("Expected an ID that begins with 'msg'"), and the
 * Codex backend cannot look it up.
 */
export const OPENAI_ITEM_ID_PREFIXES: readonly string[] = ["msg_", "fc_", "fco_", "rs_", "ctc_", "ws_", "ci_", "lsh_", "mcp_", "ig_", "cu_", "cuo_"];

/** True when `id` starts with one of {@link OPENAI_ITEM_ID_PREFIXES}. */
export function isOpenAiItemId(id: string): boolean {
  for (const p of OPENAI_ITEM_ID_PREFIXES) if (id.startsWith(p)) return true;
  return false;
}

/** The Responses usage object: every counter an integer, as Codex requires (REFERENCE §0, §6.3 step 4). */
export interface ResponsesUsage {
  input_tokens: number;
  /** `cache_write_tokens` only when the upstream reported cache writes above 0 (see {@link toResponsesUsage}). */
  input_tokens_details: { cached_tokens: number; cache_write_tokens?: number };
  output_tokens: number;
  output_tokens_details: { reasoning_tokens: number };
  total_tokens: number;
}

function int(n: number | undefined): number {
  return typeof n === "number" && Number.isFinite(n) ? Math.max(0, Math.round(n)) : 0;
}

/**
 * Hub usage → Responses usage (REFERENCE §5.10): `input_tokens` = uncached + cache read + cache write
 * (Responses input INCLUDES cached tokens), `cached_tokens` = cache read, `output_tokens` includes
 * reasoning, `total_tokens` = input + output. Unknown counters are 0 (integers always).
 *
 * Cache writes (an Anthropic upstream's `cache_creation_input_tokens`, a Chat/Responses upstream's
 * `cache_write_tokens`) are also written as `input_tokens_details.cache_write_tokens` when above 0:
 * the "newer" field of REFERENCE §5.10 that {@link fromResponsesUsage} reads, and the one Codex 0.171.0
 * deserializes (`input_tokens_details { cached_tokens, cache_write_tokens }` in its binary) into its
 * `cache_write_input_tokens` (newuser14 K4: Codex showed 0 behind the gateway). Left out at 0, so the
 * object stays OpenAI's documented shape for every reply without a cache write.
 */
export function toResponsesUsage(u: Usage): ResponsesUsage {
  const cached = int(u.cacheReadTokens);
  const write = int(u.cacheWriteTokens);
  const input = int(u.inputTokens) + cached + write;
  const output = int(u.outputTokens);
  return {
    input_tokens: input,
    input_tokens_details: write > 0 ? { cached_tokens: cached, cache_write_tokens: write } : { cached_tokens: cached },
    output_tokens: output,
    output_tokens_details: { reasoning_tokens: int(u.reasoningTokens) },
    total_tokens: input + output,
  };
}

/**
 * `JSON.stringify(toResponsesUsage(u))`, written from a template (the same members in the same order;
 * every counter an integer ≥ 0): no usage object and no `JSON.stringify` per reply. A total that is
 * not finite (two counters near the largest number) goes through `JSON.stringify`, which writes `null`.
 */
export function responsesUsageJson(u: Usage): string {
  const cached = int(u.cacheReadTokens);
  const write = int(u.cacheWriteTokens);
  const input = int(u.inputTokens) + cached + write;
  const output = int(u.outputTokens);
  const total = input + output;
  if (!Number.isFinite(total)) return JSON.stringify(toResponsesUsage(u));
  return `{"input_tokens":${input},"input_tokens_details":{"cached_tokens":${cached}${write > 0 ? `,"cache_write_tokens":${write}` : ""}},"output_tokens":${output},"output_tokens_details":{"reasoning_tokens":${int(u.reasoningTokens)}},"total_tokens":${total}}`;
}

/**
 * Responses usage → hub usage (REFERENCE §5.10): `inputTokens` = `input_tokens − cached_tokens`,
 * `cacheReadTokens` = `cached_tokens`, `outputTokens` = `output_tokens` (includes reasoning),
 * `reasoningTokens` = `output_tokens_details.reasoning_tokens`; a newer `cache_write_tokens` (top level
 * or in `input_tokens_details`) becomes `cacheWriteTokens` and is also taken out of `inputTokens`.
 * Absent counters stay absent. With the response's `output` (`items`), its `web_search_call` items (the hosted
 * web search's calls, billed per call) are counted in `webSearches` when there are any. Returns
 * undefined for a missing/null usage without such items.
 */
export function fromResponsesUsage(raw: unknown, items?: unknown): Usage | undefined {
  const searches = Array.isArray(items) ? webSearchCalls(items) : 0;
  if (!raw || typeof raw !== "object") return searches > 0 ? { webSearches: searches } : undefined;
  const u = raw as Record<string, any>;
  const out: Usage = {};
  if (searches > 0) out.webSearches = searches;
  const inDetails = u.input_tokens_details;
  const cached = finiteNumber(inDetails?.cached_tokens);
  const write = finiteNumber(u.cache_write_tokens) ?? finiteNumber(inDetails?.cache_write_tokens);
  const input = finiteNumber(u.input_tokens);
  if (input !== undefined) out.inputTokens = Math.max(0, input - (cached ?? 0) - (write ?? 0));
  if (cached !== undefined) out.cacheReadTokens = cached;
  if (write !== undefined) out.cacheWriteTokens = write;
  const output = finiteNumber(u.output_tokens);
  if (output !== undefined) out.outputTokens = output;
  const reasoning = finiteNumber(u.output_tokens_details?.reasoning_tokens);
  if (reasoning !== undefined) out.reasoningTokens = reasoning;
  return out;
}

/** How many of a response's `output` items are `web_search_call`s. */
function webSearchCalls(output: readonly unknown[]): number {
  let n = 0;
  for (const item of output) if (item !== null && typeof item === "object" && (item as { type?: unknown }).type === "web_search_call") n++;
  return n;
}

/**
 * `incomplete_details.reason` sent to a client: the two the Responses API defines (REFERENCE §3.2:
 * `max_output_tokens | content_filter`), and `pause_turn` for Anthropic's paused server-tool turn,
 * which neither says (clients read the reason as a string and show it: Codex "Incomplete response
 * returned, reason: pause_turn"; the OpenAI SDKs do not check it).
 */
export type IncompleteReason = "max_output_tokens" | "content_filter" | "pause_turn";

/** Terminal status + incomplete reason of a Responses reply, from a hub stop reason (REFERENCE §5.1). */
export interface TerminalStatus {
  status: "completed" | "incomplete";
  /** `incomplete_details.reason` when incomplete and the API has a word for why; absent: `incomplete_details: null`. */
  reason?: IncompleteReason;
}

/**
 * Hub stop reason → Responses terminal (REFERENCE §5.1): natural end, tool use, stop sequence and
 * `other` → `completed`; `max_tokens` and `context_window_exceeded` → `incomplete`
 * `max_output_tokens`; `refusal` → `incomplete` `content_filter` (`completed` when the reply carried a
 * `refusal` content part, `refusalSent`: how OpenAI ends a refusal); `pause_turn` (Anthropic paused a
 * long server-tool turn: the reply is not finished, the client must send it back to go on) →
 * `incomplete` (REFERENCE §5.1's judgement: never `completed`, SPEC 6.4) with reason `pause_turn`: the
 * API's reasons (a token limit, a filter) being neither, `null` left the client no word for why (a
 * Chat client gets `length`, a Gemini client `OTHER`: openai-chat/mapping.ts `stopToChat`,
 * gemini/mapping.ts `finishReasonToGemini`).
 */
export function terminalForStop(reason: StopReason, refusalSent = false): TerminalStatus {
  switch (reason) {
    case "max_tokens":
    case "context_window_exceeded":
      return { status: "incomplete", reason: "max_output_tokens" };
    case "refusal":
      // A refusal the client got as a `refusal` part is OpenAI's own shape of it: `completed`.
      return refusalSent ? { status: "completed" } : { status: "incomplete", reason: "content_filter" };
    case "pause_turn":
      return { status: "incomplete", reason: "pause_turn" };
    default:
      return { status: "completed" };
  }
}

/** `incomplete_details` of a response with this terminal: `{reason}` when there is one, else null. */
export function incompleteDetails(term: TerminalStatus): { reason: IncompleteReason } | null {
  return term.reason === undefined ? null : { reason: term.reason };
}

/**
 * Responses terminal → hub stop reason (REFERENCE §5.1): `completed` → `end_turn` (or `tool_use` when
 * the reply has function calls: callers pass `sawTool`); `incomplete` with `max_output_tokens` →
 * `max_tokens`, `content_filter` → `refusal`, anything else → `other`.
 */
export function stopForTerminal(status: string, reason: string | undefined, sawTool: boolean): StopReason {
  if (status === "incomplete") {
    if (reason === "max_output_tokens") return "max_tokens";
    if (reason === "content_filter") return "refusal";
    return "other";
  }
  return sawTool ? "tool_use" : "end_turn";
}

/** A parsed `data:<mime>;base64,<payload>` URL, or undefined when `url` is not a base64 data URL. */
export function parseDataUrl(url: string): { mediaType: string; data: string } | undefined {
  if (!url.startsWith("data:")) return undefined;
  const comma = url.indexOf(",");
  if (comma < 0) return undefined;
  const meta = url.slice(5, comma);
  if (!meta.endsWith(";base64")) return undefined;
  return { mediaType: meta.slice(0, -7) || "application/octet-stream", data: url.slice(comma + 1) };
}

/** A media source as a URL string for `image_url` / `file_data` (data URL for base64, the URL otherwise). */
export function sourceToUrl(src: MediaSource): string | undefined {
  switch (src.kind) {
    case "base64":
      return `data:${src.mediaType};base64,${src.data}`;
    case "url":
      return src.url;
    default:
      return undefined;
  }
}

/** Media type guessed from a file name (for `input_file` without a data URL), default PDF. */
export function mediaTypeForFilename(name: string | undefined): string {
  const ext = name?.toLowerCase().split(".").pop();
  switch (ext) {
    case "txt":
      return "text/plain";
    case "md":
      return "text/markdown";
    case "csv":
      return "text/csv";
    case "json":
      return "application/json";
    case "png":
      return "image/png";
    case "jpg":
    case "jpeg":
      return "image/jpeg";
    default:
      return "application/pdf";
  }
}

/**
 * A deterministic short hash (two FNV-1a 32-bit passes, base36), for mapping over-long ids to a
 * stable shorter form (REFERENCE §5.3: "same input id -> same output id every turn").
 */
export function stableHash(s: string): string {
  let h1 = 0x811c9dc5;
  let h2 = 0x01000193 ^ s.length;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    h1 = Math.imul(h1 ^ c, 0x01000193);
    h2 = Math.imul(h2 ^ c, 0x5bd1e995) ^ (h2 >>> 13);
  }
  return (h1 >>> 0).toString(36) + (h2 >>> 0).toString(36);
}

/** Max length of a Responses `call_id` (REFERENCE §3.1, §5.3). */
export const CALL_ID_MAX = 64;

/**
 * A `call_id` OpenAI accepts: ids up to 64 chars pass unchanged; longer ones map deterministically to
 * the first 40 chars + `_` + a stable hash, so a call and its result map to the same id (§5.3).
 */
export function sanitizeCallId(id: string): string {
  if (id.length <= CALL_ID_MAX && id.length > 0) return id;
  if (id.length === 0) return "call_" + stableHash("empty");
  return id.slice(0, 40) + "_" + stableHash(id);
}

/**
 * `source.extra` key holding the fields of function tools the hub has no slot for (`output_schema`,
 * `allowed_callers`, …), by tool key (`name`, or `namespace/name`), so a Responses target gets them
 * back (parse.ts keeps them, build.ts and response.ts restore them). Same convention as the Anthropic codec's `$anthropic_item_fields`.
 */
export const TOOL_FIELDS_KEY = "$responses_tool_fields";

/**
 * A reasoning item's `encrypted_content` holding state minted by a provider family other than `openai`
 * (an Anthropic thinking signature, a Gemini thought signature, a third-party provider's) is tagged
 * `sy|<family>|<value>` ({@link OPAQUE_TAG}, formats/hub.ts), as on the Anthropic and Gemini client
 * sides. Codex keeps the item (it asks for `reasoning.encrypted_content` with `store: false`) and sends
 * it back with its summary in the next turn's `input`, so the state goes back only to the provider that
 * issued it (SPEC F-8) and a tool loop keeps its signed thinking.
 */
export const ENCRYPTED_CONTENT_TAG = OPAQUE_TAG;

/** Hub {@link Opaque} → the `encrypted_content` a Responses client sees (raw for `openai`, tagged otherwise). */
export function writeEncryptedContent(o: Opaque): string {
  return writeTaggedOpaque(o, "openai");
}

/** A reasoning item's `encrypted_content` from a Responses client → hub {@link Opaque} (untagged values are `openai`). */
export function readEncryptedContent(value: string): Opaque {
  return readTaggedOpaque(value, "openai");
}

/**
 * The `include` entry that asks for the log probabilities of output text (Responses
 * `include: ["message.output_text.logprobs"]`, with `top_logprobs` for alternatives; OpenAI API
 * reference, Responses create, `include`).
 */
export const LOGPROBS_INCLUDE = "message.output_text.logprobs";

/**
 * The output item types the hub carries (message, reasoning, function and custom tool calls); any
 * other is a hosted tool's (`web_search_call`, `image_generation_call`, `mcp_call`, …): left out of a
 * translated reply and, between its start and its end, a server tool in flight for the keep-alive bound
 * (StreamDecoder.serverTools, TapState.serverTools).
 */
export const HUB_ITEMS: ReadonlySet<string> = new Set(["message", "reasoning", "function_call", "custom_tool_call"]);

/**
 * Responses `tools` with each Codex namespace declared once and each of its members once, as Chat,
 * Anthropic and Gemini get them (formats/tool-kinds.ts flatNamespaces): a later `{type:"namespace"}`
 * of a name already declared is left out, its members not yet declared (by type and name: a function
 * and a `custom` member may share a name) appended to the first declaration's `tools`; a member
 * declared again (in either) is left out, and `warn` gets {@link namespaceMemberTwice} for it. The
 * first declaration keeps its place and its other fields. Undefined when nothing is declared twice
 * (the caller keeps its array, bytes and all); the input is not mutated.
 */
export function namespacesOnce(tools: readonly unknown[], warn: (message: string) => void): unknown[] | undefined {
  const isNs = (t: unknown): t is Record<string, unknown> & { name: string } =>
    typeof t === "object" && t !== null && (t as Record<string, unknown>).type === "namespace" && typeof (t as Record<string, unknown>).name === "string";
  const memberKey = (m: unknown) => (typeof m === "object" && m !== null ? `${String((m as Record<string, unknown>).type)}\u0000${String((m as Record<string, unknown>).name)}` : undefined);
  const seenNs = new Set<string>();
  let twice = false;
  for (const t of tools) {
    if (!isNs(t)) continue;
    const keys = new Set<string>();
    for (const m of Array.isArray(t.tools) ? t.tools : []) {
      const k = memberKey(m);
      if (k !== undefined && keys.has(k)) twice = true;
      if (k !== undefined) keys.add(k);
    }
    if (seenNs.has(t.name)) twice = true;
    seenNs.add(t.name);
  }
  if (!twice) return undefined;
  const out: unknown[] = [];
  const firsts = new Map<string, { members: unknown[]; keys: Set<string> }>();
  for (const t of tools) {
    if (!isNs(t)) {
      out.push(t);
      continue;
    }
    let first = firsts.get(t.name);
    if (!first) {
      first = { members: [], keys: new Set() };
      firsts.set(t.name, first);
      out.push({ ...t, tools: first.members });
    }
    for (const m of Array.isArray(t.tools) ? t.tools : []) {
      const k = memberKey(m);
      if (k !== undefined && first.keys.has(k)) {
        warn(namespaceMemberTwice(t.name, String((m as Record<string, unknown>).name)));
        continue;
      }
      if (k !== undefined) first.keys.add(k);
      first.members.push(m);
    }
  }
  return out;
}
