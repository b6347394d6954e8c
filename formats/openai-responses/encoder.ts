/**
 * Canonical hub events → OpenAI Responses SSE for a client (REFERENCE §3.3, §6.3, §7 item 3).
 *
 * Output grammar:
 *   response.created  response.in_progress  item*  (response.completed | response.incomplete)
 *   | … error response.failed          (failure, SPEC 6.4; `response.failed` alone without SSE framing)
 * - every event has an `event:` line and a `data:` line whose `type` equals it; `sequence_number`
 *   counts from 0 by 1 over ALL events;
 * - every item is announced with `output_item.added` and closed with `output_item.done` carrying the
 *   full item (Codex builds messages and tool calls from `.done` only, REFERENCE §0);
 * - text block → `message` item: `content_part.added`, `output_text.delta`*, `output_text.done`,
 *   `content_part.done`; token log probabilities ride on their delta (`logprobs`, else `[]`) and are
 *   gathered into the `.done` event's, the part's and the item's `logprobs`; a refusal block (Chat `refusal`, a Responses refusal part) the same with a
 *   `refusal` part, `response.refusal.delta`* and `.done` (its `refusal` finish is then `completed`);
 * - thinking block → `reasoning` item with summary parts (`reasoning_summary_part.added`,
 *   `reasoning_summary_text.delta`*, `…text.done`, `…part.done`; a hub `thinking_part` starts the next
 *   part), `encrypted_content` on the done item when the block has a signature (another family's
 *   tagged `sy|<family>|…`, common.ts writeEncryptedContent, so it can come back to its issuer). Raw
 *   reasoning is also sent as summary text (judgement: Codex and the SDK render summaries; raw
 *   `reasoning_text` needs content parts few clients read);
 * - tool call → `function_call` item (`call_id` = hub id, `fc_` item id, `namespace` when the call or
 *   the client's tool list says so), `function_call_arguments.delta`*, `.done`; no-argument calls are
 *   sent as `{}` (judgement, REFERENCE §6.2 step 3); calls to the client's `custom` tools become
 *   `custom_tool_call` items with the raw input;
 * - a tool call's Gemini signature (no slot on a `function_call` item) → a reasoning item of its own just
 *   before the call, no summary, the signature tagged in `encrypted_content` (formats/call-signatures.ts);
 *   one that comes only after the call started (a `signature` delta on the call: Vertex streamed
 *   arguments may sign a later piece) → the same item just after the call's `output_item.done` (it
 *   names the call's id, so it goes back on that call wherever the client puts it);
 * - redacted thinking (Anthropic-only opaque state) has no Responses form and is skipped;
 * - the terminal waits for `end()` (usage follows the finish in the canonical stream) and carries the
 *   full `output` and a usage object whose counters are all integers; `max_tokens` /
 *   `context_window_exceeded` → `response.incomplete` `max_output_tokens`, `refusal` →
 *   `content_filter` (after a message whose `refusal` part is the finish's `explanation`, when no refusal
 *   text came), `pause_turn` → `response.incomplete` with reason `pause_turn` (common.ts
 *   terminalForStop);
 * - failure (an `error` event, or `end()` without a finish) → over SSE an `error` event (the OpenAI SDK
 *   raises on it), then `response.failed` with the same response id, `status: "failed"`, `error {code,
 *   message}` and the items completed so far; `response.created` first if nothing was sent. Open
 *   items get no `.done`: nothing is invented. The event encoder (Codex's Responses WebSocket, SPEC
 *   2.5) sends `response.failed` alone: on that socket an `error` frame is a request refused before its
 *   response (`{"type":"error","status":N,"error":{…}}`, which Codex reads as that request's HTTP
 *   error, codex-rs `responses_websocket.rs`), and a native Responses reply that breaks mid-way ends
 *   with `response.failed` alone too, so both lanes end a failed response the same way.
 * Ids: `resp_`, `msg_`, `rs_`, `fc_`, `ctc_` minted with `opts.newId` when given; upstream `rs_`/`fc_`
 * item ids are reused (they are what an OpenAI upstream would want back).
 */
import { localShellAction } from "../tool-kinds.ts";
import type { BlockStart, HubError, HubEvent, Opaque, StopReason, TokenLogprob, Usage } from "../hub.ts";
import { responsesDeltaLogprobsJson, responsesPartLogprobsJson } from "../openai-common/logprobs.ts";
import { mergeUsage } from "../hub.ts";
import type { EncoderOptions, StreamEncoder } from "../codec.ts";
import { flat, isPlainJsonText, jsonNumber, jsonString } from "../json-text.ts";
import { TRUNCATED_ERROR } from "../normalize.ts";
import { sseNamed } from "../sse.ts";
import { hasItemPrefix, mintId, responsesUsageJson, terminalForStop, writeEncryptedContent } from "./common.ts";
import { failedCodeForKind } from "./errors.ts";
import { clientTools, customInputOf, responseEcho, type ClientTools } from "./response.ts";
import { echoMembers } from "./echo-memo.ts";
import { callSignatureOpaque, isCallSignatureShown } from "../call-signatures.ts";

type Json = Record<string, any>;

interface OpenItem {
  kind: "message" | "reasoning" | "function_call" | "custom_tool_call" | "local_shell_call" | "skip";
  outputIndex: number;
  id: string;
  /** JSON of the id, precomputed for the per-delta string concatenation. */
  idJson: string;
  text: string;
  /**
   * A message item whose every text delta so far was plain (formats/json-text.ts isPlainJsonText: no
   * character JSON escapes): `text`'s JSON is then `text` between quotes, and no `JSON.stringify` of
   * the whole text is needed at its close (a join of plain texts is plain).
   */
  plainText?: boolean;
  phase?: string;
  /** A message whose one content part is a `refusal` part (not `output_text`). */
  refusal?: boolean;
  /** The text's token log probabilities so far, when its deltas carried any. */
  logprobs?: TokenLogprob[];
  // reasoning
  summaries: string[];
  partOpen: boolean;
  encrypted?: string;
  /**
   * A message item's `output_text.delta` text from its sequence number to the delta's opening quote
   * (`,"item_id":…,"delta":"`), flat, made at its first plain delta.
   */
  deltaMid?: string;
  // calls
  callId: string;
  name: string;
  namespace?: string;
  /** A call whose Gemini signature was sent (before it), or is pending in {@link lateSignature}. */
  signed?: boolean;
  /** A call's Gemini signature that came after its start: a reasoning item after the call (module doc). */
  lateSignature?: Opaque;
}

/** An `output_text.delta` event up to its sequence number, bare (event transport) and SSE-framed. */
const TEXT_DELTA_HEAD = '{"type":"response.output_text.delta","sequence_number":';
const TEXT_DELTA_HEAD_SSE = flat("event: response.output_text.delta\ndata: " + TEXT_DELTA_HEAD);
/** The same event after its delta text's closing quote, bare and SSE-framed. */
const TEXT_DELTA_TAIL = '","logprobs":[]}';
const TEXT_DELTA_TAIL_SSE = flat(TEXT_DELTA_TAIL + "\n\n");

/** A message item's `phase` member (with its leading comma), or nothing when the item has none. */
function phaseMember(phase: string | undefined): string {
  return phase ? `,"phase":${JSON.stringify(phase)}` : "";
}

class ResponsesEncoder implements StreamEncoder {
  private seq = 0;
  private started = false;
  private closed = false;
  private readonly responseId: string;
  private readonly createdAt: number;
  private readonly echo: Json;
  /**
   * The response object's unchanging JSON parts, made at its first use: up to `"status":"`, the `model`
   * member, and the echo's members with their trailing comma (instructions and tools can be tens of KB).
   */
  private responseHead: string | undefined;
  private modelMember = "";
  private echoMembers: string | undefined;
  private readonly tools: ClientTools;
  /** The JSON text of each finished output item, made once for its `output_item.done` and reused in the terminal. */
  private readonly output: string[] = [];
  private cur: OpenItem | null = null;
  private finish: StopReason | null = null;
  /** A refusal part was sent: a `refusal` finish is then `completed`, as OpenAI ends one. */
  private refusalSent = false;
  private readonly usage: Usage = {};

  /**
   * `emit` gets each event's name and data (the SSE encoder frames them, the event encoder hands them
   * on); `write`, given by the SSE encoder, takes a whole frame the encoder wrote itself (the text
   * deltas: fewer string pieces per event than framing the data afterwards).
   */
  constructor(
    private readonly opts: EncoderOptions,
    private readonly emit: (event: string, data: string) => void,
    private readonly write?: (text: string) => void,
  ) {
    this.responseId = mintId("resp_", opts.newId);
    this.createdAt = Math.floor((opts.now ? opts.now() : Date.now()) / 1000);
    this.echo = responseEcho(opts.request);
    this.tools = clientTools(opts.request);
  }

  event(ev: HubEvent): void {
    if (this.closed) return;
    switch (ev.type) {
      case "message_start":
        mergeUsage(this.usage, ev.usage);
        this.begin();
        return;
      case "block_start":
        this.begin();
        this.open(ev.block);
        return;
      case "block_delta":
        this.delta(ev.delta);
        return;
      case "block_stop":
        this.close();
        return;
      case "usage":
        mergeUsage(this.usage, ev.usage);
        return;
      case "finish":
        this.begin();
        if (this.cur) this.close();
        if (ev.reason === "refusal" && ev.explanation !== undefined && !this.refusalSent) {
          // A provider's refusal explained but not worded as refusal text (Anthropic `stop_details`): a
          // message with the explanation as its `refusal` part; the status stays `incomplete`
          // `content_filter` (the provider's policy stopped it), so not `refusalSent`.
          this.open({ type: "text", refusal: true });
          this.delta({ type: "text", text: ev.explanation });
          this.close();
          this.refusalSent = false;
        }
        this.finish = ev.reason;
        return;
      case "error":
        // After the provider's stop reason only the closing events are missing (SPEC 6.4), as in the
        // other encoders: the reply ends as it finished.
        if (this.finish !== null) this.end();
        else this.fail(ev.error);
        return;
    }
  }

  end(): void {
    if (this.closed) return;
    if (this.finish === null) {
      this.fail(TRUNCATED_ERROR);
      return;
    }
    this.closed = true;
    const term = terminalForStop(this.finish, this.refusalSent);
    const type = term.status === "completed" ? "response.completed" : "response.incomplete";
    const response = this.responseJson(term.status, {
      incomplete: term.reason ? `{"reason":"${term.reason}"}` : "null",
      output: this.outputJson(),
      usage: responsesUsageJson(this.usage),
    });
    this.send(type, `{"type":"${type}","sequence_number":${this.seq},"response":${response}}`);
  }

  // ---------------------------------------------------------------------------------------------

  private send(type: string, data: string): void {
    this.seq++;
    this.emit(type, data);
  }

  /** Sends an event object built by the caller (sequence number added here). */
  private sendObj(type: string, body: Json): void {
    this.send(type, JSON.stringify({ type, sequence_number: this.seq, ...body }));
  }

  /**
   * The JSON text of the response object: `id`, `object`, `created_at`, `status`, `error`,
   * `incomplete_details`, `model`, `output`, the request echo's fields, `usage`, in that order (what
   * `JSON.stringify` of that object literal writes; `model` left out when unknown). `fields` are JSON
   * texts (null when absent).
   */
  private responseJson(status: "in_progress" | "completed" | "incomplete" | "failed", fields: { error?: string; incomplete?: string; output: string; usage?: string }): string {
    let head = this.responseHead;
    let echo = this.echoMembers;
    if (head === undefined || echo === undefined) {
      // The parts that do not change within a reply, made once.
      head = this.responseHead = `{"id":${jsonString(this.responseId)},"object":"response","created_at":${jsonNumber(this.createdAt)},"status":"`;
      this.modelMember = this.opts.model === undefined ? "" : `"model":${JSON.stringify(this.opts.model)},`;
      // The same text for the same echo: remembered across requests when large (Codex's tools).
      echo = this.echoMembers = echoMembers(this.echo, this.opts.requestText);
    }
    // One template literal (joined in one step), not a chain of `+` (a rope per `+`).
    return `${head}${status}","error":${fields.error ?? "null"},"incomplete_details":${fields.incomplete ?? "null"},${this.modelMember}"output":${fields.output},${echo}"usage":${fields.usage ?? "null"}}`;
  }

  /** The finished output items as a JSON array. */
  private outputJson(): string {
    return `[${this.output.join(",")}]`;
  }

  private begin(): void {
    if (this.started) return;
    this.started = true;
    const r = this.responseJson("in_progress", { output: "[]" });
    this.send("response.created", `{"type":"response.created","sequence_number":${this.seq},"response":${r}}`);
    this.send("response.in_progress", `{"type":"response.in_progress","sequence_number":${this.seq},"response":${r}}`);
  }

  private open(b: BlockStart): void {
    // A tool call's Gemini signature: a reasoning item of its own just before the call, with the
    // signature and the call's id as its encrypted_content (formats/call-signatures.ts), which the
    // client sends back.
    const signed = b.type === "tool_call" && isCallSignatureShown(b.signature);
    if (signed) {
      this.open({ type: "thinking" });
      this.cur!.encrypted = writeEncryptedContent(callSignatureOpaque(b.id, b.signature!));
    }
    if (this.cur) this.close();
    const outputIndex = this.output.length;
    const base = { outputIndex, text: "", summaries: [] as string[], partOpen: false, callId: "", name: "", signed };
    switch (b.type) {
      case "text": {
        const id = mintId("msg_", this.opts.newId);
        const idJson = jsonString(id);
        const it: OpenItem = { ...base, kind: "message", id, idJson, plainText: true };
        if (b.phase) it.phase = b.phase;
        this.cur = it;
        if (b.refusal === true) {
          it.refusal = this.refusalSent = true;
          this.sendObj("response.output_item.added", { output_index: outputIndex, item: { id, type: "message", status: "in_progress", content: [], role: "assistant", ...(it.phase ? { phase: it.phase } : {}) } });
          this.sendObj("response.content_part.added", { item_id: id, output_index: outputIndex, content_index: 0, part: { type: "refusal", refusal: "" } });
          return;
        }
        // The reply's most common item, written from templates (the JSON.stringify of these objects, same key order).
        this.send(
          "response.output_item.added",
          `{"type":"response.output_item.added","sequence_number":${this.seq},"output_index":${outputIndex},"item":{"id":${idJson},"type":"message","status":"in_progress","content":[],"role":"assistant"${phaseMember(it.phase)}}}`,
        );
        this.send(
          "response.content_part.added",
          `{"type":"response.content_part.added","sequence_number":${this.seq},"item_id":${idJson},"output_index":${outputIndex},"content_index":0,"part":{"type":"output_text","annotations":[],"logprobs":[],"text":""}}`,
        );
        return;
      }
      case "thinking": {
        const id = hasItemPrefix(b.itemId, "rs_") ? b.itemId : mintId("rs_", this.opts.newId);
        this.cur = { ...base, kind: "reasoning", id, idJson: JSON.stringify(id) };
        this.sendObj("response.output_item.added", { output_index: outputIndex, item: { id, type: "reasoning", summary: [] } });
        return;
      }
      case "tool_call": {
        const r = this.tools.resolve(b.name, b.namespace);
        if (r.custom) {
          const id = mintId("ctc_", this.opts.newId);
          const it: OpenItem = { ...base, kind: "custom_tool_call", id, idJson: JSON.stringify(id), callId: b.id, name: r.name };
          const item: Json = { id, type: "custom_tool_call", status: "in_progress", call_id: b.id, name: r.name };
          const ns = b.namespace ?? r.namespace;
          if (ns) item.namespace = it.namespace = ns;
          item.input = "";
          this.cur = it;
          this.sendObj("response.output_item.added", { output_index: outputIndex, item });
          return;
        }
        if (r.localShell) {
          // Codex's local shell: the action is known once the arguments are complete (sent at the stop).
          const id = mintId("lsh_", this.opts.newId);
          this.cur = { ...base, kind: "local_shell_call", id, idJson: JSON.stringify(id), callId: b.id, name: r.name };
          this.sendObj("response.output_item.added", {
            output_index: outputIndex,
            item: { id, type: "local_shell_call", status: "in_progress", call_id: b.id, action: { type: "exec", command: [], env: {} } },
          });
          return;
        }
        const id = hasItemPrefix(b.itemId, "fc_") ? b.itemId : mintId("fc_", this.opts.newId);
        const it: OpenItem = { ...base, kind: "function_call", id, idJson: JSON.stringify(id), callId: b.id, name: r.name };
        const item: Json = { id, type: "function_call", status: "in_progress", arguments: "", call_id: b.id, name: r.name };
        const ns = b.namespace ?? r.namespace;
        if (ns) item.namespace = it.namespace = ns;
        this.cur = it;
        this.sendObj("response.output_item.added", { output_index: outputIndex, item });
        return;
      }
      case "redacted_thinking":
        this.cur = { ...base, kind: "skip", id: "", idJson: "" };
        return;
    }
  }

  /** {@link StreamEncoder.text}: a text delta without its event objects (the `block_delta` case, no log probabilities). */
  text(_index: number, text: string, plain: boolean): void {
    if (this.closed) return;
    const it = this.cur;
    if (it && it.kind === "message") this.textDelta(it, text, undefined, plain);
  }

  /** A message item's text delta; `plain` as for {@link StreamEncoder.text}. */
  private textDelta(it: OpenItem, text: string, logprobs: TokenLogprob[] | undefined, plain: boolean): void {
    it.text += text;
    if (it.refusal) {
      it.plainText = false;
      this.send(
        "response.refusal.delta",
        `{"type":"response.refusal.delta","sequence_number":${this.seq},"item_id":${it.idJson},"output_index":${it.outputIndex},"content_index":0,"delta":${JSON.stringify(text)}}`,
      );
      return;
    }
    if (logprobs === undefined && (plain || isPlainJsonText(text))) {
      // The reply's most common event, from flat parts around the text (what the template below writes).
      const mid = (it.deltaMid ??= flat(`,"item_id":${it.idJson},"output_index":${it.outputIndex},"content_index":0,"delta":"`));
      const seq = this.seq++;
      if (this.write) this.write(TEXT_DELTA_HEAD_SSE + seq + mid + text + TEXT_DELTA_TAIL_SSE);
      else this.emit("response.output_text.delta", TEXT_DELTA_HEAD + seq + mid + text + TEXT_DELTA_TAIL);
      return;
    }
    it.plainText = false;
    let lp = "[]";
    if (logprobs !== undefined) {
      if (it.logprobs) for (const t of logprobs) it.logprobs.push(t);
      else it.logprobs = logprobs.slice();
      lp = responsesDeltaLogprobsJson(logprobs);
    }
    this.send(
      "response.output_text.delta",
      `{"type":"response.output_text.delta","sequence_number":${this.seq},"item_id":${it.idJson},"output_index":${it.outputIndex},"content_index":0,"delta":${JSON.stringify(text)},"logprobs":${lp}}`,
    );
  }

  private delta(d: Extract<HubEvent, { type: "block_delta" }>["delta"]): void {
    const it = this.cur;
    if (!it) return;
    switch (d.type) {
      case "text":
        if (it.kind !== "message") return;
        this.textDelta(it, d.text, d.logprobs, false);
        return;
      case "thinking": {
        if (it.kind !== "reasoning" || d.text.length === 0) return;
        if (!it.partOpen) this.openSummary(it);
        const s = it.summaries.length - 1;
        it.summaries[s] += d.text;
        this.send(
          "response.reasoning_summary_text.delta",
          `{"type":"response.reasoning_summary_text.delta","sequence_number":${this.seq},"item_id":${it.idJson},"output_index":${it.outputIndex},"summary_index":${s},"delta":${JSON.stringify(d.text)}}`,
        );
        return;
      }
      case "thinking_part":
        if (it.kind === "reasoning" && it.partOpen) this.closeSummary(it);
        return;
      case "signature":
        if (it.kind === "reasoning") it.encrypted = writeEncryptedContent(d.signature);
        else if ((it.kind === "function_call" || it.kind === "custom_tool_call" || it.kind === "local_shell_call") && !it.signed && isCallSignatureShown(d.signature)) {
          // the call's first signature, come late: a reasoning item after the call (module doc)
          it.signed = true;
          it.lateSignature = d.signature;
        }
        return;
      case "tool_args":
        if (it.kind === "function_call") {
          it.text += d.json;
          this.send(
            "response.function_call_arguments.delta",
            `{"type":"response.function_call_arguments.delta","sequence_number":${this.seq},"item_id":${it.idJson},"output_index":${it.outputIndex},"delta":${JSON.stringify(d.json)}}`,
          );
        } else if (it.kind === "custom_tool_call" || it.kind === "local_shell_call") {
          it.text += d.json; // sent whole at the stop: the hub carries `{"input": …}` / the action's JSON
        }
        return;
    }
  }

  private openSummary(it: OpenItem): void {
    it.partOpen = true;
    it.summaries.push("");
    this.sendObj("response.reasoning_summary_part.added", {
      item_id: it.id,
      output_index: it.outputIndex,
      summary_index: it.summaries.length - 1,
      part: { type: "summary_text", text: "" },
    });
  }

  private closeSummary(it: OpenItem): void {
    it.partOpen = false;
    const s = it.summaries.length - 1;
    const text = it.summaries[s]!;
    this.sendObj("response.reasoning_summary_text.done", { item_id: it.id, output_index: it.outputIndex, summary_index: s, text });
    this.sendObj("response.reasoning_summary_part.done", {
      item_id: it.id,
      output_index: it.outputIndex,
      summary_index: s,
      part: { type: "summary_text", text },
    });
  }

  /** Closes the open item: its `.done` events and the full item into `output`. */
  private close(): void {
    const it = this.cur;
    if (!it) return;
    this.cur = null;
    let item: Json | undefined;
    let itemJson: string | undefined;
    switch (it.kind) {
      case "skip":
        return;
      case "message": {
        // The text is serialised once for its three appearances (done, part, item) and the terminal's; a
        // text of plain deltas is quoted as it is, flattened once (it goes into four frames).
        const textJson = it.plainText === true ? flat(`"${it.text}"`) : JSON.stringify(it.text);
        if (it.refusal) {
          const part = `{"type":"refusal","refusal":${textJson}}`;
          this.send("response.refusal.done", `{"type":"response.refusal.done","sequence_number":${this.seq},"item_id":${it.idJson},"output_index":${it.outputIndex},"content_index":0,"refusal":${textJson}}`);
          this.send("response.content_part.done", `{"type":"response.content_part.done","sequence_number":${this.seq},"item_id":${it.idJson},"output_index":${it.outputIndex},"content_index":0,"part":${part}}`);
          itemJson = `{"id":${it.idJson},"type":"message","status":"completed","content":[${part}],"role":"assistant"${phaseMember(it.phase)}}`;
          break;
        }
        const lp = it.logprobs ? responsesPartLogprobsJson(it.logprobs) : "[]";
        const part = `{"type":"output_text","annotations":[],"logprobs":${lp},"text":${textJson}}`;
        this.send(
          "response.output_text.done",
          `{"type":"response.output_text.done","sequence_number":${this.seq},"item_id":${it.idJson},"output_index":${it.outputIndex},"content_index":0,"text":${textJson},"logprobs":${lp}}`,
        );
        this.send(
          "response.content_part.done",
          `{"type":"response.content_part.done","sequence_number":${this.seq},"item_id":${it.idJson},"output_index":${it.outputIndex},"content_index":0,"part":${part}}`,
        );
        itemJson = `{"id":${it.idJson},"type":"message","status":"completed","content":[${part}],"role":"assistant"${phaseMember(it.phase)}}`;
        break;
      }
      case "reasoning": {
        if (it.partOpen) this.closeSummary(it);
        item = { id: it.id, type: "reasoning", summary: it.summaries.map((text) => ({ type: "summary_text", text })) };
        if (it.encrypted !== undefined) item.encrypted_content = it.encrypted;
        break;
      }
      case "function_call": {
        const args = it.text.length > 0 ? it.text : "{}";
        this.sendObj("response.function_call_arguments.done", { item_id: it.id, output_index: it.outputIndex, name: it.name, arguments: args });
        item = { id: it.id, type: "function_call", status: "completed", arguments: args, call_id: it.callId, name: it.name };
        if (it.namespace) item.namespace = it.namespace;
        break;
      }
      case "custom_tool_call": {
        const input = customInputOf(it.text);
        if (input.length > 0) this.sendObj("response.custom_tool_call_input.delta", { item_id: it.id, output_index: it.outputIndex, delta: input });
        this.sendObj("response.custom_tool_call_input.done", { item_id: it.id, output_index: it.outputIndex, input });
        item = { id: it.id, type: "custom_tool_call", status: "completed", call_id: it.callId, name: it.name };
        if (it.namespace) item.namespace = it.namespace;
        item.input = input;
        break;
      }
      case "local_shell_call":
        item = { id: it.id, type: "local_shell_call", status: "completed", call_id: it.callId, action: localShellAction(it.text) };
        break;
    }
    itemJson ??= JSON.stringify(item);
    this.output.push(itemJson);
    this.send("response.output_item.done", `{"type":"response.output_item.done","sequence_number":${this.seq},"output_index":${it.outputIndex},"item":${itemJson}}`);
    if (it.lateSignature !== undefined) {
      this.open({ type: "thinking" });
      this.cur!.encrypted = writeEncryptedContent(callSignatureOpaque(it.callId, it.lateSignature));
      this.close();
    }
  }

  /** In-band failure (SPEC 6.4): `error` (SSE only) then `response.failed`; `response.created` first if needed. */
  private fail(err: HubError): void {
    if (this.closed) return;
    this.closed = true;
    if (!this.started) {
      this.started = true;
      const r = this.responseJson("in_progress", { output: "[]" });
      this.send("response.created", `{"type":"response.created","sequence_number":${this.seq},"response":${r}}`);
    }
    const code = failedCodeForKind(err.kind);
    // `write` is the SSE encoder's: only there does an `error` event precede `response.failed` (module doc).
    if (this.write) this.sendObj("error", { code, message: err.message, param: err.param ?? null });
    const response = this.responseJson("failed", { error: JSON.stringify({ code, message: err.message }), output: this.outputJson() });
    this.send("response.failed", `{"type":"response.failed","sequence_number":${this.seq},"response":${response}}`);
  }
}

/**
 * Creates the client-side encoder (codec `createEncoder`). Input: CANONICAL hub events (run
 * `normalizeEvents` first); output: Responses SSE text written to `write` (module doc). Never throws.
 */
export function createEncoder(opts: EncoderOptions, write: (text: string) => void): StreamEncoder {
  return new ResponsesEncoder(opts, (event, data) => write(sseNamed(event, data)), write);
}

/**
 * Creates the encoder of the same events without SSE framing (codec `createEventEncoder`): `emit` gets
 * each event's name (its `type`) and its JSON data, in the order and with the sequence numbers the SSE
 * encoder writes, but for a failure: `response.failed` without the SSE stream's `error` event before
 * it (module doc). Never throws.
 */
export function createEventEncoder(opts: EncoderOptions, emit: (event: string, data: string) => void): StreamEncoder {
  return new ResponsesEncoder(opts, emit);
}
