/**
 * Reads what a client got from the gateway, the way that client would: raw SSE event names for exact
 * order checks, and the official SDK's own accumulating parser for the reassembled reply
 * (`@anthropic-ai/sdk` MessageStream.finalMessage, `openai` ChatCompletionStream.finalChatCompletion and
 * ResponseStream.finalResponse). The SDKs are fed the recorded bytes through a custom fetch: nothing
 * touches the network.
 */
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";

export type ClientFormat = "anthropic-messages" | "openai-chat" | "openai-responses";

/** The reply as a client sees it, in the client format's own vocabulary. */
export interface ClientView {
  status: number;
  /** SSE event names (Anthropic, Responses: `event:` lines or data.type; Chat: none), pings removed. */
  eventTypes: string[];
  text: string;
  toolCalls: Array<{ id?: string; name: string; arguments: unknown }>;
  /** Anthropic stop_reason, Chat finish_reason, Responses terminal status. */
  stopReason: string | null;
  usage: Record<string, unknown> | undefined;
  /** The in-band error the SDK raised, or the HTTP error body. */
  error?: { inBand: boolean; type?: string; code?: string; param?: string; message?: string };
  /** Thinking / reasoning text, kept apart from `text`. */
  reasoning: string;
  /** The model's refusal where the format has a field for it (Chat `message.refusal`, Responses `refusal` parts), apart from `text`. */
  refusal: string;
  /** Token log probabilities of the text, in order, as the SDK reassembled them (Chat `choices[0].logprobs.content`, Responses `output_text.logprobs`). */
  logprobs: Array<{ token: string; logprob: number; top: Array<{ token: string; logprob: number }> }>;
  raw: string;
}

/** An OpenAI token list reduced to what every format carries: token, logprob, alternatives'. */
function tokensOf(list: unknown): ClientView["logprobs"] {
  if (!Array.isArray(list)) return [];
  return list.map((t: any) => ({ token: t.token, logprob: t.logprob, top: (t.top_logprobs ?? []).map((a: any) => ({ token: a.token, logprob: a.logprob })) }));
}

function feed(bytes: string, contentType: string) {
  return async () => new Response(bytes, { status: 200, headers: { "content-type": contentType } });
}

/** SSE events of a text: name (event: line, or data.type) and parsed data. */
export function sseEvents(text: string): Array<{ event?: string; data: string; json?: any }> {
  const out: Array<{ event?: string; data: string; json?: any }> = [];
  for (const block of text.split(/\r?\n\r?\n/)) {
    let event: string | undefined;
    const data: string[] = [];
    for (const line of block.split(/\r?\n/)) {
      if (line.startsWith("event:")) event = line.slice(6).trim();
      else if (line.startsWith("data:")) data.push(line.slice(5).replace(/^ /, ""));
    }
    if (data.length === 0) continue;
    const d = data.join("\n");
    let json: any;
    try {
      json = JSON.parse(d);
    } catch {
      json = undefined;
    }
    out.push({ event, data: d, json });
  }
  return out;
}

/**
 * Interprets a gateway reply. `request` is the client body (the SDK helpers need it). Errors raised by
 * the SDK become `error` (inBand true for streams).
 */
export async function viewReply(format: ClientFormat, res: Response, request: any): Promise<ClientView> {
  const raw = await res.text();
  const view: ClientView = { status: res.status, eventTypes: [], text: "", toolCalls: [], stopReason: null, usage: undefined, reasoning: "", refusal: "", logprobs: [], raw };
  const isSse = (res.headers.get("content-type") ?? "").includes("event-stream");
  if (res.status >= 400) {
    let body: any;
    try {
      body = JSON.parse(raw);
    } catch {
      body = undefined;
    }
    const e = body?.error ?? {};
    view.error = { inBand: false, type: e.type, code: e.code, param: e.param, message: e.message };
    return view;
  }
  if (isSse) {
    view.eventTypes = sseEvents(raw)
      .map((e) => e.event ?? e.json?.type)
      .filter((t): t is string => typeof t === "string" && t !== "ping");
  }
  switch (format) {
    case "anthropic-messages": {
      let msg: any;
      if (isSse) {
        const client = new Anthropic({ apiKey: "x", baseURL: "http://127.0.0.1:1", maxRetries: 0, fetch: feed(raw, "text/event-stream") as never });
        try {
          msg = await client.messages.stream({ ...request, stream: undefined }).finalMessage();
        } catch (e: any) {
          view.error = { inBand: true, type: e?.error?.error?.type ?? e?.error?.type, message: e?.message };
          return view;
        }
      } else msg = JSON.parse(raw);
      for (const b of msg.content ?? []) {
        if (b.type === "text") view.text += b.text;
        else if (b.type === "thinking") view.reasoning += b.thinking;
        else if (b.type === "tool_use") view.toolCalls.push({ id: b.id, name: b.name, arguments: b.input });
      }
      view.stopReason = msg.stop_reason ?? null;
      view.usage = msg.usage;
      return view;
    }
    case "openai-chat": {
      let c: any;
      if (isSse) {
        const client = new OpenAI({ apiKey: "x", baseURL: "http://127.0.0.1:1", maxRetries: 0, fetch: feed(raw, "text/event-stream") as never });
        try {
          c = await client.chat.completions.stream({ ...request, stream: undefined }).finalChatCompletion();
        } catch (e: any) {
          view.error = { inBand: true, type: e?.error?.type ?? e?.type, code: e?.error?.code ?? e?.code, param: e?.error?.param ?? e?.param, message: e?.message };
          return view;
        }
        const usageChunk = sseEvents(raw).find((e) => e.json?.usage);
        view.usage = usageChunk?.json?.usage ?? c.usage ?? undefined;
      } else {
        c = JSON.parse(raw);
        view.usage = c.usage;
      }
      const choice = c.choices?.[0];
      view.text = choice?.message?.content ?? "";
      view.refusal = choice?.message?.refusal ?? "";
      view.logprobs = tokensOf(choice?.logprobs?.content);
      view.reasoning = choice?.message?.reasoning_content ?? "";
      for (const t of choice?.message?.tool_calls ?? []) {
        view.toolCalls.push({ id: t.id, name: t.function.name, arguments: t.function.arguments === "" ? {} : JSON.parse(t.function.arguments) });
      }
      view.stopReason = choice?.finish_reason ?? null;
      return view;
    }
    case "openai-responses": {
      let r: any;
      if (isSse) {
        const client = new OpenAI({ apiKey: "x", baseURL: "http://127.0.0.1:1", maxRetries: 0, fetch: feed(raw, "text/event-stream") as never });
        try {
          r = await client.responses.stream({ ...request, stream: undefined }).finalResponse();
        } catch (e: any) {
          const failed = sseEvents(raw).find((x) => x.json?.type === "response.failed")?.json;
          view.error = { inBand: true, type: e?.error?.type ?? e?.type, code: failed?.response?.error?.code ?? e?.code, message: e?.message };
          view.stopReason = failed ? "failed" : null;
          return view;
        }
        const failed = sseEvents(raw).find((x) => x.json?.type === "response.failed")?.json;
        if (failed) {
          view.error = { inBand: true, code: failed.response?.error?.code, message: failed.response?.error?.message };
          view.stopReason = "failed";
          return view;
        }
      } else r = JSON.parse(raw);
      for (const item of r.output ?? []) {
        if (item.type === "message") {
          for (const p of item.content ?? []) {
            if (p.type === "output_text") {
              view.text += p.text;
              view.logprobs.push(...tokensOf(p.logprobs));
            }
            else if (p.type === "refusal") view.refusal += p.refusal;
          }
        }
        if (item.type === "reasoning") for (const p of item.summary ?? []) view.reasoning += p.text;
        if (item.type === "function_call") view.toolCalls.push({ id: item.call_id, name: item.name, arguments: item.arguments === "" ? {} : JSON.parse(item.arguments) });
      }
      view.stopReason = r.status ?? null;
      view.usage = r.usage ?? undefined;
      return view;
    }
  }
}

/** The endpoint path of a client format. */
export function endpointOf(format: ClientFormat): string {
  return format === "anthropic-messages" ? "/v1/messages" : format === "openai-chat" ? "/v1/chat/completions" : "/v1/responses";
}
