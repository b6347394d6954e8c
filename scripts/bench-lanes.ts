/**
 * The lanes of scripts/bench: one client endpoint (and transport) → one upstream format each, with the
 * realistic small request every lane sends. See docs/performance.md ("What scripts/bench does").
 */

/** Non-streaming (`json`) or streaming. */
export type Mode = "json" | "stream";
export const MODES: Mode[] = ["json", "stream"];

/** One lane: what the client sends, where, and how switchyard is reached. */
export interface Lane {
  /** `client→upstream` format, e.g. `gemini→chat`. */
  name: string;
  /** native: the upstream speaks the client's format; translated: through the hub. */
  kind: "native" | "translated";
  /** Client endpoint path (with its query) for a stream mode and model name. */
  path: (stream: boolean, model: string) => string;
  /** The client request body for a stream mode and model name. */
  body: (stream: boolean, model: string) => Record<string, unknown>;
  /** Base model name: `bench`, `bench-big` and `bench-hold` variants are derived from it. */
  model: string;
  /**
   * `websocket`: switchyard is called over the Responses WebSocket (one `response.create` frame per
   * request on a socket kept open, as Codex does); direct over HTTP; no raw pipe (it has no WebSocket).
   */
  transport?: "websocket";
  /** The modes run (default both). */
  modes?: Mode[];
}

const USER = "Summarise the change in one sentence.";
const at = (path: string) => () => path;
/** The Gemini client path: the model and the method are in it (SPEC 2.1); streams always as SSE. */
const geminiPath = (stream: boolean, model: string) => `/v1beta/models/${model}:${stream ? "streamGenerateContent?alt=sse" : "generateContent"}`;

/**
 * Every lane, in the order the tables print them (the HTTP Responses lane right above the WebSocket
 * one, so their CPU per request sit next to each other). `bodyKb` sizes the system prompt so that the
 * Chat body is about that many KiB. The first two lanes (chat→chat, messages→messages) are the ones the
 * binary and open-streams sections use.
 */
export function benchLanes(bodyKb: number): Lane[] {
  const system = "You are a careful coding assistant. Answer briefly and precisely. ".repeat(Math.max(1, Math.round((bodyKb * 1024 - 400) / 68)));
  const messagesBody = (stream: boolean, model: string) => ({ model, stream, max_tokens: 256, system, messages: [{ role: "user", content: USER }] });
  const responsesBody = (stream: boolean, model: string) => ({ model, stream, instructions: system, input: USER, max_output_tokens: 256 });
  const geminiBody = () => ({ systemInstruction: { parts: [{ text: system }] }, contents: [{ role: "user", parts: [{ text: USER }] }], generationConfig: { maxOutputTokens: 256 } });
  return [
    {
      name: "chat→chat",
      kind: "native",
      path: at("/v1/chat/completions"),
      model: "gpt-bench",
      body: (stream, model) => ({ model, stream, messages: [{ role: "system", content: system }, { role: "user", content: USER }], max_tokens: 256 }),
    },
    { name: "messages→messages", kind: "native", path: at("/v1/messages"), model: "claude-bench", body: messagesBody },
    { name: "messages→chat", kind: "translated", path: at("/v1/messages"), model: "gpt-bench", body: messagesBody },
    { name: "responses→chat", kind: "translated", path: at("/v1/responses"), model: "cchat/gpt-bench", body: responsesBody },
    { name: "responses-ws→chat", kind: "translated", path: at("/v1/responses"), model: "cchat/gpt-bench", body: responsesBody, transport: "websocket", modes: ["stream"] },
    { name: "gemini→gemini", kind: "native", path: geminiPath, model: "gemini-bench", body: geminiBody },
    { name: "gemini→chat", kind: "translated", path: geminiPath, model: "gpt-bench", body: geminiBody },
  ];
}

/**
 * The order a section of scripts/bench visits its rows (lane × mode) in round `round` (0-based): as
 * listed in even rounds, reversed in odd ones. With one fixed order the Gemini lanes, listed last, were
 * always measured at the end of a round (2–3 minutes after the first lane, right after the Messages and
 * Responses lanes); a lane's position in a round moved its CPU per request by tens of µs in one run
 * (docs/performance.md item 97), so each row is measured near both ends. Returns a new array.
 */
export function roundOrder<T>(rows: readonly T[], round: number): T[] {
  return round % 2 === 0 ? [...rows] : [...rows].reverse();
}

/**
 * An order of `n` targets (indices 0…n-1, n ≥ 2) for requests sent one at a time, read as a cycle: each
 * target comes right after every other target exactly once (an Eulerian circuit of the complete
 * directed graph), so each appears n-1 times in its n·(n-1) entries. scripts/bench-ab.ts's `--latency`
 * sends its requests in this order: a request measured right after another gateway's (whose work after
 * its reply may still run) is not more often that of one build than of another (docs/performance.md
 * item 153).
 */
export function balancedSequence(n: number): number[] {
  if (n < 2) return [0];
  /** The out-edges each target has left to walk. */
  const left = Array.from({ length: n }, (_, i) => Array.from({ length: n - 1 }, (_, k) => (i + 1 + k) % n));
  const stack = [0];
  const circuit: number[] = [];
  while (stack.length > 0) {
    const v = stack[stack.length - 1];
    const next = left[v].shift();
    if (next === undefined) circuit.push(stack.pop()!);
    else stack.push(next);
  }
  // The circuit starts and ends at 0: the cycle is the circuit without its repeated last entry.
  return circuit.reverse().slice(0, -1);
}

/** `xs` rotated left by `r` (any integer): `rotated([a, b, c], 1)` is `[b, c, a]`. Returns a new array. */
export function rotated<T>(xs: readonly T[], r: number): T[] {
  const k = ((r % xs.length) + xs.length) % xs.length;
  return [...xs.slice(k), ...xs.slice(0, k)];
}
