/**
 * The instructions the installed Codex CLI sends for a model it has no metadata for, captured from
 * Codex itself, for the model catalog `switchyard setup codex` writes (src/cli/setup.ts).
 *
 * Why: Codex 0.171 reads an API-key provider's model metadata only from its bundled catalog or a
 * `model_catalog_json` file, and it rejects a catalog entry that carries neither `base_instructions`
 * nor `model_messages.instructions_template` ("model `x` is missing both …"): the entry's instructions
 * become the session's system prompt. For a model it does not know, Codex sends its own built-in
 * prompt; putting exactly that text in the catalog keeps the prompt Codex sends unchanged and changes
 * only the metadata. The text is Codex's: it is read from the user's own Codex at setup time (so it
 * matches that version; re-run setup after upgrading Codex), never shipped with switchyard.
 *
 * How: a one-request Responses endpoint on 127.0.0.1 (port 0); `codex exec` in a scratch CODEX_HOME
 * whose only provider is that endpoint (analytics, plugins and update checks off, so Codex contacts
 * nothing else), asked for a model name no catalog holds; the request's prompt ({@link promptOf}) is
 * the answer, and Codex gets an empty completed response so it exits.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** A model name no Codex catalog holds, so Codex uses its fallback metadata and prompt. */
const PROBE_MODEL = "switchyard-instructions-probe";

/** The SSE reply that ends Codex's turn at once: an empty completed response. */
function emptyCompleted(model: string): string {
  const response = { id: "resp_probe", object: "response", created_at: 0, status: "completed", model, output: [], usage: { input_tokens: 0, output_tokens: 0, total_tokens: 0 } };
  const ev = (type: string, extra: Record<string, unknown>) => `event: ${type}\ndata: ${JSON.stringify({ type, ...extra })}\n\n`;
  return ev("response.created", { sequence_number: 0, response: { ...response, status: "in_progress" } }) + ev("response.completed", { sequence_number: 1, response });
}

/**
 * The prompt in a Codex Responses request: Codex 0.171 sends it as the first `developer` message of
 * `input` (one `input_text` part); older versions sent it as `instructions`. Undefined when neither.
 */
export function promptOf(body: unknown): string | undefined {
  if (typeof body !== "object" || body === null) return undefined;
  const b = body as { instructions?: unknown; input?: unknown };
  if (typeof b.instructions === "string" && b.instructions.length > 0) return b.instructions;
  if (!Array.isArray(b.input)) return undefined;
  const first = b.input.find((x) => typeof x === "object" && x !== null && (x as { role?: unknown }).role === "developer") as { content?: unknown } | undefined;
  const parts = Array.isArray(first?.content) ? first.content : [];
  const text = parts.length === 1 ? (parts[0] as { type?: unknown; text?: unknown }) : undefined;
  return text?.type === "input_text" && typeof text.text === "string" && text.text.length > 0 ? text.text : undefined;
}

/**
 * Runs `codexBin exec` once against a capturing endpoint and returns the prompt of its Responses
 * request ({@link promptOf}). Throws (with what Codex printed) when Codex exits or `timeoutMs` passes without
 * sending a request that carries instructions.
 */
export async function captureCodexInstructions(codexBin: string, timeoutMs = 60_000): Promise<string> {
  let captured: ((text: string) => void) | undefined;
  const instructions = new Promise<string>((resolve) => (captured = resolve));
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(req) {
      if (req.method !== "POST" || !new URL(req.url).pathname.endsWith("/responses")) return new Response("not found", { status: 404 });
      let body: unknown;
      try {
        body = await req.json();
      } catch {
        return new Response("bad request", { status: 400 });
      }
      const text = promptOf(body);
      if (text !== undefined) captured?.(text);
      return new Response(emptyCompleted(PROBE_MODEL), { headers: { "content-type": "text/event-stream" } });
    },
  });
  const home = mkdtempSync(join(tmpdir(), "switchyard-codex-probe-"));
  const codexHome = join(home, ".codex");
  mkdirSync(codexHome);
  writeFileSync(
    join(codexHome, "config.toml"),
    `model = "${PROBE_MODEL}"
model_provider = "probe"
approval_policy = "never"
check_for_update_on_startup = false

[model_providers.probe]
name = "probe"
base_url = "http://127.0.0.1:${server.port}/v1"
wire_api = "responses"
experimental_bearer_token = "probe"
request_max_retries = 0
stream_max_retries = 0

[analytics]
enabled = false

[features]
plugins = false
`,
  );
  let proc: ReturnType<typeof spawnCodex>;
  try {
    proc = spawnCodex(codexBin, home, codexHome);
  } catch (e) {
    // A binary that cannot be started (ENOENT, EACCES) throws here: the capturing server must not keep
    // the process alive (`setup codex --codex-bin /nonexistent` hung after its last line).
    server.stop(true);
    rmSync(home, { recursive: true, force: true });
    throw new Error(`${codexBin} could not be started: ${e instanceof Error ? e.message : String(e)}`);
  }
  const output = Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text()]).then(([o, e]) => `${o}\n${e}`.trim());
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    const outcome = await Promise.race([
      instructions.then((text) => ({ text })),
      proc.exited.then(() => ({ exited: true as const })),
      new Promise<{ timeout: true }>((resolve) => (timer = setTimeout(() => resolve({ timeout: true }), timeoutMs))),
    ]);
    if ("text" in outcome) return outcome.text;
    proc.kill();
    const said = (await output).slice(-600);
    throw new Error(`${codexBin} ${"timeout" in outcome ? `sent no request within ${timeoutMs / 1000} s` : "exited without sending a request"}${said ? `: ${said}` : ""}`);
  } finally {
    clearTimeout(timer);
    proc.kill();
    await proc.exited;
    server.stop(true);
    rmSync(home, { recursive: true, force: true });
  }
}

/** Starts `codexBin exec` for {@link captureCodexInstructions} in the scratch `home`; throws when the binary cannot be started. */
function spawnCodex(codexBin: string, home: string, codexHome: string) {
  return Bun.spawn([codexBin, "exec", "--skip-git-repo-check", "--color", "never", "hi"], {
    cwd: home,
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: home, CODEX_HOME: codexHome, LANG: "C.UTF-8", TERM: "dumb", NO_COLOR: "1" },
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
}
