/**
 * How a running gateway stops on SIGTERM / SIGINT, shared by `switchyard start` (src/main.ts) and
 * scripts/demo, so that `switchyard stop --data-dir DIR` reads the same exit status from either
 * (last-exit.json, src/exit-status.ts) and their logs end with the same "shutting down" and "stopped"
 * lines (src/log-lines.ts).
 */
import type { App } from "./app.ts";
import { secondSignalLine, stoppedLine, thirdSignalLine } from "./log-lines.ts";

/**
 * Installs the SIGTERM and SIGINT handlers that stop `app` and exit the process.
 *
 * A second signal during the grace period (Ctrl-C twice, a supervisor signalling again) ends the grace
 * period now rather than cutting connections: open streams still get their in-band error, usage is
 * flushed and instance.json removed; the exit code is then 128 + the signal's number (130 SIGINT,
 * 143 SIGTERM), the convention for "killed by a signal", not 0 (try20 D4). A request still waiting on
 * its upstream (for a whole reply, or a stream's first content) gets a 503 in its own format, its
 * upstream call aborted, as at the end of a full grace period. The second signal also ends the last
 * flush's retries while the database is away (they count what was lost); a third exits at once
 * (review20 R3, R4), its line counting the requests answered since the stop began, whose log lines and
 * usage rows may be lost (try22 P3). Every stop ends with one `stopped` line: exit code, time taken,
 * how the requests in flight ended, rows of the last flush (src/log-lines.ts stoppedLine, try22 P8).
 *
 * `opts.afterShutdown` runs once the app has shut down, before the "stopped" line and the exit (the
 * demo stops its fake upstream there). Call it before the "listening" line is written: a supervisor that
 * signals the moment it reads that line must get the graceful stop, not Bun's default exit (143).
 */
export function stopOnSignals(app: App, opts: { afterShutdown?: () => Promise<void> } = {}): void {
  let stopping = false;
  let forcedBy: string | undefined;
  const stop = async (signal: string) => {
    if (forcedBy) {
      const code = signal === "SIGINT" ? 130 : 143;
      process.stderr.write(thirdSignalLine(signal, code, app.stopProgress(), Date.now()) + "\n");
      app.leaveExitStatus(code, `a third signal (${signal}) during its stop made it exit at once, without its last writes: the requests it answered since the stop began may have no log line or usage row`);
      process.exit(code);
    }
    if (stopping) {
      forcedBy = signal;
      const p = app.stopProgress();
      process.stderr.write(secondSignalLine(signal, p ? p.open() : { requests: app.inflight(), streams: 0 }, Date.now()) + "\n");
      await app.shutdown();
      return;
    }
    stopping = true;
    process.stderr.write(JSON.stringify({ level: "info", time: Date.now(), msg: "shutting down", signal, inflight: app.inflight() }) + "\n");
    const written = await app.shutdown();
    await opts.afterShutdown?.();
    // 130 / 143 after a second signal; 1: writes were lost (logged); else 0. The closing line says which and how it went.
    const code = forcedBy ? (forcedBy === "SIGINT" ? 130 : 143) : written ? 0 : 1;
    process.stderr.write(stoppedLine(app.stopProgress()!, code, forcedBy, Date.now()) + "\n");
    // for `switchyard stop`, which is not this process's parent (src/exit-status.ts)
    app.leaveExitStatus(
      code,
      forcedBy
        ? `a second ${forcedBy} ended its shutdown grace period early: the requests still open then were ended (a stream with its in-band error, a request waiting on its upstream with a 503)`
        : code !== 0
          ? "writes were lost: the database was away, or the embedded store's writes failed (a full disk): rows unwritten at the stop, or refused earlier at the store's cap; its log line \"stopping …\" says which"
          : undefined,
    );
    process.exit(code);
  };
  process.on("SIGTERM", () => void stop("SIGTERM"));
  process.on("SIGINT", () => void stop("SIGINT"));
}
