/**
 * Long logs with repeated lines (build and test output, server logs, retry loops, progress lines) for
 * the tool-result compressor (SPEC S-1).
 *
 * Two lines are similar when they are equal after masking what varies between repetitions: numbers,
 * hex ids, UUIDs, timestamps. A run of at least {@link MIN_RUN} consecutive similar lines keeps its
 * first {@link HEAD} lines and its last line, with `… 312 similar lines elided` between them; a block
 * of up to {@link MAX_PERIOD} lines repeated at least three times (a retry loop) keeps its first and
 * last repetition (`… 40 similar lines elided (the 2-line block above, 20 more times)`). A run
 * is collapsed only when its lines look like log lines (a timestamp, a level such as INFO/WARN/ERROR,
 * a bracketed tag or a progress verb at the start) or are exactly equal: similar lines of source code
 * (a file dump, a data table) are never collapsed, and a text that looks like a numbered file listing
 * is left alone entirely.
 *
 * Error lines ({@link errorLine}: an upper-case level word such as ERROR, FATAL, FAIL, PANIC, CRITICAL
 * anywhere; `error:`, `Error:`, `TypeError:`, `fatal:`, `panic:`, `error[E0308]:` in any case; a
 * `…Exception` word; Python's `Traceback (most recent call last)`; an error level as a logfmt or JSON
 * field, an nginx/Apache tag, a glog/klog `E`/`F` line start) are never masked: each is compared
 * as it is, so error lines that differ in anything (a shard number, a path, a timestamp) are all kept,
 * and only a byte-for-byte repeat of an error line (the same line again, as a retry loop without
 * timestamps prints it) is collapsed with its count. Only repeated non-error lines are collapsed as
 * similar.
 */
import { plural, mostly, marker, type RuleOutput, type SaverRule } from "./common.ts";

/** Shortest run that is collapsed. */
const MIN_RUN = 6;
/** Lines kept at the start of a run (plus its last line). */
const HEAD = 2;

/** UUIDs, hex ids (6+ hex digits with a digit among them), digit runs: one pass. */
const VARIES = /[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}|\b(?=[a-fA-F]*\d)[0-9a-fA-F]{6,}\b|\d+/g;

/** A line with what varies between repetitions masked. */
export function template(line: string): string {
  return line.replace(VARIES, "#");
}

const LOG_START =
  /^\s*(?:\[?\d{4}[-/]\d{2}[-/]\d{2}[T ]\d{1,2}:\d{2}|\[?\d{1,2}:\d{2}:\d{2}|[A-Z][a-z]{2} +\d{1,2} \d{2}:\d{2}:\d{2}|\[[^\]\n]{1,60}\]|[IWEF]\d{4} \d{2}:\d{2}|npm (?:WARN|ERR!|notice|info)|(?:Downloading|Downloaded|Compiling|Building|Fetching|Installing|Resolving|Retrying|Waiting|Progress|Processing|Uploading|Checking|Running|Reading|Writing)\b|\d{1,3}%|[▕▏█░▒▓#=>-]{3,})/;
const LEVEL = /\b(?:TRACE|DEBUG|INFO|NOTICE|WARN|WARNING|ERROR|ERR|FATAL|CRITICAL|PANIC|SEVERE)\b/;

/** An upper-case level or outcome word: `ERROR`, `npm ERR!`, `FATAL`, `FAIL`/`FAILED`, `PANIC`, … (case-sensitive). */
const ERROR_WORD = /\b(?:ERROR|ERRORS|ERR|FATAL|FAIL|FAILED|FAILURE|PANIC|CRITICAL|CRIT|SEVERE|EMERG|EMERGENCY|ALERT)\b/;
/** `error:`, `Error:`, `TypeError:`, `fatal:`, `panic:`, `error[E0308]:` (any case). */
const ERROR_TEXT = /(?:error|fatal|panic)(?:\[[\w-]+\])?:/i;
/** A `java.io.IOException`-style word (capital E), a Python traceback's first line. */
const EXCEPTION = /[A-Za-z]Exception\b|\bException\b|^Traceback \(most recent call last\)/;
/**
 * An error level written as a field or a tag in any case: logfmt `level=error` (Go's slog, logrus),
 * JSON `"level":"error"` (zap, pino's text levels, bunyan's names), nginx/Apache `[error]`, `[crit]`,
 * `[alert]`, `[emerg]`, and glog/klog's `E1207 03:00:01.123456` / `F…` line start (Kubernetes, Go).
 */
const ERROR_LEVEL =
  /\b(?:level|lvl|severity)=["']?(?:error|err|fatal|panic|crit(?:ical)?|alert|emerg(?:ency)?)\b|"(?:level|lvl|severity)"\s*:\s*"(?:error|err|fatal|panic|crit(?:ical)?|alert|emerg(?:ency)?)"|\[(?:error|err|crit|critical|alert|emerg|fatal)\]|^\s*[EF]\d{4} \d{2}:\d{2}/i;

/**
 * Whether a line reads as an error (see the module doc): such lines are never collapsed as similar,
 * only as byte-for-byte repeats. Pure; the words `failed` or `error` in lower case without a colon (a
 * `WARN … connect failed, retry 3/10` line) do not make an error line.
 */
export function errorLine(line: string): boolean {
  return ERROR_WORD.test(line) || ERROR_TEXT.test(line) || EXCEPTION.test(line) || ERROR_LEVEL.test(line);
}

/** Whether a line looks like a log line (see the module doc). */
export function logLike(line: string): boolean {
  return LOG_START.test(line) || LEVEL.test(line.slice(0, 60));
}

/** `   12→text`, `12:text`, `  12\ttext`: a numbered file listing (Read tool, `cat -n`, `nl`). */
const NUMBERED_FILE = /^\s*\d+(?:→|\t|: )/;

/** Put before an error line's template: it never equals a masked line's. */
const ERROR_MARK = "\u0000";

/** Longest repeating block (in lines) that is recognised: a retry loop's "failed / retrying in 2s". */
const MAX_PERIOD = 4;

/**
 * The collapsible run starting at `i`: the smallest period (1…{@link MAX_PERIOD} lines) whose block
 * repeats (by template) often enough that at least {@link MIN_RUN} lines and three blocks are covered,
 * with every line log-like or every block exactly equal to the first. Undefined when there is none.
 */
function findRun(lines: string[], templates: string[], i: number): { period: number; reps: number } | { skip: number } | undefined {
  if (templates[i].trim() === "") return undefined;
  for (let period = 1; period <= MAX_PERIOD; period++) {
    let j = i + period;
    while (j < lines.length && templates[j] === templates[j - period]) j++;
    const reps = Math.floor((j - i) / period);
    if (reps < 3 || reps * period < MIN_RUN) continue;
    const span = lines.slice(i, i + reps * period);
    if (span.every((l) => l.trim() !== "") && (span.every(logLike) || span.every((l, k) => l === lines[i + (k % period)]))) return { period, reps };
    // Similar lines that are not a log (source code, a table): pass the whole run over, once (this
    // also keeps the scan linear).
    return { skip: reps * period };
  }
  return undefined;
}

/** The repeated-log rule (see the module doc). */
export const logRule: SaverRule = {
  name: "log",
  apply(lines: string[]): RuleOutput | undefined {
    if (lines.length < MIN_RUN) return undefined;
    if (mostly(lines, (l) => NUMBERED_FILE.test(l), 0.5)) return undefined;
    // Only log-like lines can be similar without being equal: others are compared as they are (and
    // the masking is skipped for them). Error lines are compared as they are too, behind a mark no
    // masked line holds, so only an identical error line continues their run.
    const templates = lines.map((l) => (errorLine(l) ? ERROR_MARK + l : logLike(l) ? template(l) : l));
    const out: string[] = [];
    let elided = 0;
    let runs = 0;
    let i = 0;
    while (i < lines.length) {
      const run = findRun(lines, templates, i);
      if (!run || "skip" in run) {
        const n = run ? run.skip : 1;
        for (let k = i; k < i + n; k++) out.push(lines[k]);
        i += n;
        continue;
      }
      const { period, reps } = run;
      const keepHead = period === 1 ? HEAD : period;
      const end = i + reps * period;
      const gone = reps * period - keepHead - period;
      for (let k = i; k < i + keepHead; k++) out.push(lines[k]);
      out.push(period === 1 ? marker(plural(gone, "similar line")) : `${marker(plural(gone, "similar line"))} (the ${period}-line block above, ${plural(reps - 2, "more time")})`);
      for (let k = end - period; k < end; k++) out.push(lines[k]);
      elided += gone;
      runs++;
      i = end;
    }
    if (runs === 0) return undefined;
    return { text: out.join("\n"), elided: [`${plural(elided, "similar line")} in ${plural(runs, "run")}`] };
  },
};
