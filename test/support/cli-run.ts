/**
 * Running a real CLI as a child process for the e2e tests: a timeout that kills the whole process group,
 * captured stdout/stderr, and a readable description for failure messages. Also the "trap proxy": every
 * CLI run gets HTTP(S)_PROXY pointing at a local listener that refuses everything and records the host
 * the CLI tried to reach (NO_PROXY covers 127.0.0.1 and localhost), so a CLI that wants the internet is
 * caught and named instead of reaching out.
 */
import type { Socket, TCPSocketListener } from "bun";

export interface CliRunResult {
  /** The command line (argv). */
  argv: string[];
  /** Exit code; null when killed by a signal. */
  code: number | null;
  signal: string | null;
  stdout: string;
  stderr: string;
  timedOut: boolean;
  ms: number;
}

export interface CliRunOptions {
  cwd: string;
  /** The child's whole environment (nothing is inherited implicitly). */
  env: Record<string, string>;
  timeoutMs: number;
  /** Text written to the child's stdin, which is then closed; default: no stdin (/dev/null). */
  stdin?: string;
}

/** Runs argv to completion or until timeoutMs, when its whole process group gets SIGKILL. */
export async function runCli(argv: string[], opts: CliRunOptions): Promise<CliRunResult> {
  const started = Date.now();
  const proc = Bun.spawn(argv, {
    cwd: opts.cwd,
    env: opts.env,
    stdin: opts.stdin === undefined ? "ignore" : new Blob([opts.stdin]),
    stdout: "pipe",
    stderr: "pipe",
    // Own process group, so a timeout also kills the shells and tools the CLI started.
    detached: true,
  });
  let timedOut = false;
  const kill = () => {
    try {
      process.kill(-proc.pid, "SIGKILL");
    } catch {
      proc.kill("SIGKILL");
    }
  };
  const timer = setTimeout(() => {
    timedOut = true;
    kill();
  }, opts.timeoutMs);
  try {
    const [stdout, stderr] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
    return { argv, code: proc.exitCode, signal: proc.signalCode == null ? null : String(proc.signalCode), stdout, stderr, timedOut, ms: Date.now() - started };
  } finally {
    clearTimeout(timer);
    // Leftover children (a tool still running after the CLI exited) go too.
    try {
      process.kill(-proc.pid, "SIGKILL");
    } catch {
      /* group already gone */
    }
  }
}

/** The last `n` characters of s, marked when cut. */
export function tail(s: string, n: number): string {
  return s.length <= n ? s : `…${s.slice(-n)}`;
}

/** A multi-line description of a run for assertion messages: argv, exit, time, stdout and stderr. */
export function describeRun(r: CliRunResult, extra = ""): string {
  return [
    `$ ${r.argv.map((a) => (/\s/.test(a) ? JSON.stringify(a) : a)).join(" ")}`,
    `exit ${r.code}${r.signal ? ` (signal ${r.signal})` : ""}${r.timedOut ? " — TIMED OUT, killed" : ""} after ${r.ms} ms`,
    `--- stdout ---\n${tail(r.stdout, 4000)}`,
    `--- stderr ---\n${tail(r.stderr, 6000)}`,
    extra,
  ].join("\n");
}

export interface TrapProxy {
  /** http://127.0.0.1:PORT */
  url: string;
  /** Request lines received, e.g. `CONNECT api.github.com:443 HTTP/1.1`. */
  attempts: string[];
  /** Proxy variables for a child's environment (upper and lower case), with NO_PROXY for loopback. */
  env(): Record<string, string>;
  stop(): void;
}

/** Starts a proxy on 127.0.0.1:0 that answers every request with 403 and records what was asked. */
export function startTrapProxy(): TrapProxy {
  const attempts: string[] = [];
  const dec = new TextDecoder();
  const listener: TCPSocketListener<undefined> = Bun.listen<undefined>({
    hostname: "127.0.0.1",
    port: 0,
    socket: {
      data(sock: Socket<undefined>, data) {
        const first = dec.decode(data).split("\r\n")[0] ?? "";
        attempts.push(first);
        sock.write("HTTP/1.1 403 Forbidden\r\ncontent-length: 0\r\nconnection: close\r\n\r\n");
        sock.end();
      },
    },
  });
  const url = `http://127.0.0.1:${listener.port}`;
  return {
    url,
    attempts,
    env: () => ({
      HTTPS_PROXY: url,
      HTTP_PROXY: url,
      ALL_PROXY: url,
      https_proxy: url,
      http_proxy: url,
      all_proxy: url,
      NO_PROXY: "127.0.0.1,localhost",
      no_proxy: "127.0.0.1,localhost",
    }),
    stop: () => listener.stop(true),
  };
}
