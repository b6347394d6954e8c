/**
 * GET /v1/models (SPEC 2.1): provider models, combos and aliases the caller may use, in OpenAI's list
 * shape, or Anthropic's when the client sent `anthropic-version`; and POST /v1/messages/count_tokens.
 */
import type { RuntimeConfig } from "./config/types.ts";

interface Entry {
  id: string;
  owner: string;
}

function entries(cfg: RuntimeConfig): Entry[] {
  const out: Entry[] = [];
  for (const p of cfg.providers.values()) {
    for (const m of Object.keys(p.models)) out.push({ id: `${p.id}/${m}`, owner: p.id });
  }
  for (const name of cfg.combos.keys()) out.push({ id: name, owner: "switchyard-combo" });
  for (const name of cfg.aliases.keys()) out.push({ id: name, owner: "switchyard-alias" });
  return out;
}

const CREATED = 1_700_000_000;

function shape(e: Entry, anthropic: boolean): unknown {
  return anthropic
    ? { type: "model", id: e.id, display_name: e.id, created_at: new Date(CREATED * 1000).toISOString() }
    : { id: e.id, object: "model", created: CREATED, owned_by: e.owner };
}

/** The model list body. */
export function modelList(cfg: RuntimeConfig, anthropic: boolean): unknown {
  const list = entries(cfg).map((e) => shape(e, anthropic));
  if (anthropic) {
    return { data: list, has_more: false, first_id: (list[0] as { id?: string })?.id ?? null, last_id: (list.at(-1) as { id?: string })?.id ?? null };
  }
  return { object: "list", data: list };
}

/** One model entry, or undefined when the id is not listed. */
export function modelEntry(cfg: RuntimeConfig, id: string, anthropic: boolean): unknown | undefined {
  const e = entries(cfg).find((x) => x.id === id);
  return e ? shape(e, anthropic) : undefined;
}

/**
 * POST /v1/messages/count_tokens, estimated locally: about 4 characters of prompt text per token
 * (content strings, system, tool definitions). Forwarding to an Anthropic-format provider is not done
 * yet (README: not done yet).
 */
export function countTokensHandler() {
  return async (request: Request): Promise<Response> => {
    let body: unknown;
    try {
      body = await request.json();
    } catch {
      return new Response(JSON.stringify({ type: "error", error: { type: "invalid_request_error", message: "The request body is not valid JSON." } }), {
        status: 400,
        headers: { "content-type": "application/json" },
      });
    }
    const b = (body ?? {}) as Record<string, unknown>;
    const text = JSON.stringify([b.system ?? "", b.messages ?? [], b.tools ?? []]);
    return Response.json({ input_tokens: Math.max(1, Math.ceil(text.length / 4)) });
  };
}
