/**
 * Conversation affinity keys (SPEC A-2, 2.4): which conversation a request belongs to, so the account
 * pool can send it back to the account that last answered it (the provider's prompt cache stays warm).
 *
 * - An explicit session header wins, first present in this order (SPEC 2.4): `X-Switchyard-Session`,
 *   `X-Session-Id`, `X-Conversation-Id`, `X-Session-Affinity`, `Session-Id` (also Codex's `session-id`),
 *   then Claude Code's own `x-claude-code-session-id`.
 * - Otherwise a fingerprint of (model, start of the system prompt, tool names, first user message).
 *
 * Keys are hashed (SHA-256, hex, 32 chars) with a kind prefix (`s:` session, `f:` fingerprint): they
 * are stored in the database and must never carry prompt text or a client's header value in clear.
 * Pure functions, and {@link affinityHints}: the pick hints of one request.
 */
import type { HubMessage, HubRequest } from "../formats/hub.ts";
import { tryHubOf, type RequestContext } from "./context.ts";
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
export function sessionHeader(headers: Headers): { name: string; value: string } | undefined {
  for (const name of SESSION_HEADERS) {
    const v = headers.get(name)?.trim();
    if (v) return { name, value: v };
  }
  return undefined;
}

function hash(text: string): string {
  return new Bun.CryptoHasher("sha256").update(text).digest("hex").slice(0, 32);
}

function text(m: HubMessage | undefined): string {
  if (!m) return "";
  let s = "";
  for (const p of m.content) {
    if (p.type === "text") {
      s += p.text;
    } else if (p.type === "tool_result") {
      for (const c of p.content) if (c.type === "text") s += c.text;
    } else {
      s += `[${p.type}]`;
    }
    if (s.length >= FIRST_USER_CHARS) break;
  }
  return s.slice(0, FIRST_USER_CHARS);
}

/**
 * The conversation fingerprint (SPEC A-2): SHA-256 over the requested model, the first
 * {@link SYSTEM_PREFIX_CHARS} characters of the system prompt (top-level system blocks, else the
 * leading system/developer turns), the tool names in order, and the first {@link FIRST_USER_CHARS}
 * characters of the first user message. Later turns do not change it, so every request of one
 * conversation maps to the same key. Returns `f:` + 32 hex chars.
 */
export function conversationFingerprint(hub: HubRequest, model: string): string {
  let system = hub.system.map((s) => s.text).join("\n");
  if (!system) {
    for (const m of hub.messages) {
      if (m.role !== "system" && m.role !== "developer") break;
      system += text(m) + "\n";
    }
  }
  const tools = hub.tools.map((t) => (t.kind === "function" ? t.name : (t.name ?? String(t.raw.type ?? "provider-tool"))));
  const firstUser = text(hub.messages.find((m) => m.role === "user"));
  return "f:" + hash(JSON.stringify([model, system.slice(0, SYSTEM_PREFIX_CHARS), tools, firstUser]));
}

/** The key of an explicit session header: `s:` + 32 hex chars (the header name does not matter). */
export function sessionKey(value: string): string {
  return "s:" + hash(value);
}

/**
 * The affinity key of a request: the session header's key when one is present, else the fingerprint
 * of the parsed body, else undefined (no body could be parsed: no affinity).
 */
export function affinityKey(headers: Headers, hub: HubRequest | undefined, model: string): string | undefined {
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
  let key: string | undefined;
  let computed = false;
  return {
    get affinityKey() {
      if (!computed) {
        computed = true;
        key = affinityKey(ctx.request.headers, tryHubOf(ctx), ctx.requestedModel);
      }
      return key;
    },
    affinity: cacheAffinity,
  };
}
