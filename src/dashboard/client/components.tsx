/** Shared view pieces: data loading, the 1-second ticker, countdowns, charts (uPlot), cards, pills. */
import { Fragment, type ComponentChildren } from "preact";
import { useCallback, useEffect, useLayoutEffect, useRef, useState } from "preact/hooks";
import uPlot from "uplot";
import "uplot/dist/uPlot.min.css";
import { announce } from "./announce.ts";
import { ApiError } from "./api.ts";
import { COPIED, copyByHand, copyText, selectText } from "./copy.ts";
import { axisTicks, chartTime, span, timeTicks } from "./format.ts";

/** Result of {@link useData}. */
export interface Data<T> {
  data?: T;
  error?: string;
  loading: boolean;
  /** Loads again; concurrent calls coalesce. */
  reload: () => void;
}

/** First wait before {@link useData} reads again after a failed read (ms); doubles up to {@link READ_RETRY_MAX_MS}. */
const READ_RETRY_FIRST_MS = 1_000;
/** Longest wait between two retries of a failed read (ms). */
const READ_RETRY_MAX_MS = 15_000;

/**
 * Whether a failed read is worth retrying by itself: the gateway or something in front of it could not
 * answer (no answer at all, 408, 429, a 5xx such as the store's 503 or a proxy's 502). Other 4xx
 * answers (a trace that is not there, a refused filter) stay as they are until the next reload.
 */
function retryable(e: unknown): boolean {
  if (!(e instanceof ApiError)) return true;
  return e.status >= 500 || e.status === 408 || e.status === 429;
}

/**
 * Loads `load()` on mount and whenever `deps` change; `reload` re-runs it (newest answer wins). A read
 * that failed for want of an answer ({@link retryable}: network error, 5xx, 408, 429) is retried while
 * the component is mounted, after 1 s doubling to 15 s; its error stays shown until a read succeeds.
 */
export function useData<T>(load: () => Promise<T>, deps: unknown[] = []): Data<T> {
  const [state, setState] = useState<{ data?: T; error?: string; loading: boolean }>({ loading: true });
  const seq = useRef(0);
  const loader = useRef(load);
  loader.current = load;
  const retry = useRef<{ timer?: ReturnType<typeof setTimeout>; wait: number }>({ wait: READ_RETRY_FIRST_MS });
  const reload = useCallback(() => {
    const n = ++seq.current;
    clearTimeout(retry.current.timer);
    retry.current.timer = undefined;
    loader
      .current()
      .then((data) => {
        if (n !== seq.current) return;
        retry.current.wait = READ_RETRY_FIRST_MS;
        setState({ data, loading: false });
      })
      .catch((e: unknown) => {
        if (n !== seq.current) return;
        setState((s) => ({ ...s, loading: false, error: e instanceof ApiError || e instanceof Error ? e.message : String(e) }));
        if (!retryable(e)) return;
        const wait = retry.current.wait;
        retry.current.wait = Math.min(wait * 2, READ_RETRY_MAX_MS);
        retry.current.timer = setTimeout(() => {
          retry.current.timer = undefined;
          if (n === seq.current) reload();
        }, wait);
      });
  }, []);
  useEffect(reload, deps);
  useEffect(
    () => () => {
      // unmounted: no retry, and an answer still on its way is dropped
      seq.current++;
      clearTimeout(retry.current.timer);
    },
    [],
  );
  return { ...state, reload };
}

/** Calls `fn` at most once per `ms`, trailing (for bursts of live events). */
export function useDebounced(fn: () => void, ms: number): () => void {
  const t = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);
  const f = useRef(fn);
  f.current = fn;
  useEffect(() => () => clearTimeout(t.current), []);
  return useCallback(() => {
    if (t.current !== undefined) return;
    t.current = setTimeout(() => {
      t.current = undefined;
      f.current();
    }, ms);
  }, [ms]);
}

const tickers = new Set<(now: number) => void>();
let tickTimer: ReturnType<typeof setInterval> | undefined;

/** The current time, re-rendered every second (one shared timer). */
export function useNow(): number {
  const [now, setNow] = useState(Date.now());
  useEffect(() => {
    tickers.add(setNow);
    tickTimer ??= setInterval(() => {
      const n = Date.now();
      for (const t of tickers) t(n);
    }, 1000);
    return () => {
      tickers.delete(setNow);
      if (tickers.size === 0) {
        clearInterval(tickTimer);
        tickTimer = undefined;
      }
    };
  }, []);
  return now;
}

/** A live countdown to `until` ("1m 05s"), with the clock time in its tooltip. */
export function Countdown({ until, prefix }: { until: number; prefix?: string }) {
  const now = useNow();
  return (
    <span class="countdown" title={new Date(until).toLocaleString()} data-until={until}>
      {prefix}
      {until - now > 0 ? span(until - now) : "ending…"}
    </span>
  );
}

/** A coloured status label. */
export function Pill({ tone, children, title }: { tone: "ok" | "warn" | "bad" | "off" | "info"; children: ComponentChildren; title?: string }) {
  return (
    <span class={`pill pill-${tone}`} title={title}>
      {children}
    </span>
  );
}

/** A titled panel; `row`: one item of a list of cards (`data-row`: confirm-action.tsx moves focus to a neighbour when it goes). */
export function Card({ title, actions, children, class: cls, row }: { title?: ComponentChildren; actions?: ComponentChildren; children: ComponentChildren; class?: string; row?: boolean }) {
  return (
    <section class={`card ${cls ?? ""}`} data-row={row ? "" : undefined}>
      {(title || actions) && (
        <header class="card-head">
          <h2>{title}</h2>
          <div class="card-actions">{actions}</div>
        </header>
      )}
      {children}
    </section>
  );
}

/** A teaching empty state. */
export function Empty({ title, children }: { title: string; children: ComponentChildren }) {
  return (
    <div class="empty">
      <h3>{title}</h3>
      {children}
    </div>
  );
}

/** An error line from a failed load or action. */
export function ErrorLine({ error }: { error?: string }) {
  return error ? (
    <p class="error-line" role="alert">
      {error}
    </p>
  ) : null;
}

/**
 * A button that copies `code` to the clipboard (src/dashboard/client/copy.ts: the Clipboard API, else a
 * selected read-only field and `execCommand("copy")` on a non-secure origin) and says "Copied" for
 * 1.5 s; when neither way copied, it selects the code of its snippet or card and says (beside it, for
 * 8 s) to press Ctrl+C, or ⌘C on a Mac. Either sentence is announced too (#announcer).
 */
export function CopyButton({ code, class: cls }: { code: string; class?: string }) {
  const [said, setSaid] = useState<"copied" | "by-hand" | undefined>(undefined);
  const timer = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);
  const button = useRef<HTMLButtonElement>(null);
  useEffect(() => () => clearTimeout(timer.current), []);
  const copy = () => {
    void copyText(code).then((ok) => {
      clearTimeout(timer.current);
      setSaid(ok ? "copied" : "by-hand");
      announce(ok ? COPIED : copyByHand());
      if (!ok) selectText(button.current?.closest(".snippet, .card")?.querySelector("code"));
      timer.current = setTimeout(() => setSaid(undefined), ok ? 1500 : 8000);
    });
  };
  return (
    <>
      <button type="button" ref={button} class={`btn btn-small ${cls ?? ""}`} onClick={copy}>
        {said === "copied" ? COPIED : "Copy"}
      </button>
      {said === "by-hand" && <span class="copy-hint muted">{copyByHand()}</span>}
    </>
  );
}

/**
 * A code block with a copy button in its top right corner (its lines keep clear of it), or, with
 * `copy={false}`, without one: the caller puts a {@link CopyButton} elsewhere (a card's head) and the
 * lines get the block's whole width.
 */
export function Snippet({ code, label, copy = true }: { code: string; label?: string; copy?: boolean }) {
  return (
    <div class="snippet">
      {label && <div class="snippet-label">{label}</div>}
      <pre class={copy ? "" : "snippet-full"}>
        <code>{code}</code>
      </pre>
      {copy && <CopyButton code={code} class="snippet-copy" />}
    </div>
  );
}

/** One stat tile. */
export function Stat({ label, value, sub, tone }: { label: string; value: ComponentChildren; sub?: ComponentChildren; tone?: string }) {
  return (
    <div class={`stat ${tone ? `stat-${tone}` : ""}`}>
      <div class="stat-label">{label}</div>
      <div class="stat-value">{value}</div>
      {sub !== undefined && <div class="stat-sub">{sub}</div>}
    </div>
  );
}

/** One series of a {@link TimeChart}. */
export interface ChartSeries {
  label: string;
  values: (number | null)[];
  color: string;
  /** Bars instead of a line. */
  bars?: boolean;
  fmt?: (v: number) => string;
}

/** The time axis's steps on a chart of days: 1 to 15 days, in seconds. */
const DAY_TICKS = [1, 2, 3, 4, 5, 7, 10, 15].map((d) => d * 86_400);

/**
 * The chart's data as uPlot takes it (x in seconds). With `bucketMs` (each time starts a bucket of that
 * width) a closing point at the end of the last bucket, where a line repeats the last bucket's value
 * (its step spans that bucket too) and a bar has none.
 */
function chartData(times: number[], series: ChartSeries[], bucketMs: number | undefined): uPlot.AlignedData {
  const xs = times.map((t) => t / 1000);
  if (!bucketMs || times.length === 0) return [xs, ...series.map((s) => s.values)] as uPlot.AlignedData;
  xs.push((times[times.length - 1]! + bucketMs) / 1000);
  return [xs, ...series.map((s) => [...s.values, s.bars ? null : (s.values[s.values.length - 1] ?? null)])] as uPlot.AlignedData;
}

/**
 * A time-series chart drawn by uPlot (canvas). `times` are ms since the epoch; the chart resizes
 * with its container. Its legend reads the values under the pointer, else the last bucket's. Two bar
 * series stand side by side in each bucket (the first left of the bucket's time, the second right),
 * not one over the other.
 * With `bucketMs`, each time starts a bucket of that width (the usage series): every series is drawn
 * across its bucket, a line as steps (flat over each bucket, straight down to an empty one: a line
 * from an empty bucket to a busy one sloped as if tokens had flowed in between; newuser12a G13) and a
 * single bar series over the bucket's width (a pair stands at the bucket's time as above), so bars and
 * lines of one chart line up and the last bucket has its width.
 * The time axis and the legend write times alike, in the reader's locale and time zone as the rest of
 * the pages (format.ts `timeTicks`, `chartTime`).
 */
export function TimeChart({ times, series, height = 200, bucketMs }: { times: number[]; series: ChartSeries[]; height?: number; bucketMs?: number }) {
  const el = useRef<HTMLDivElement>(null);
  const plot = useRef<uPlot | undefined>(undefined);
  const key = `${series.map((s) => `${s.label}:${s.bars ? 1 : 0}`).join("|")}/${bucketMs ?? 0}`;
  useLayoutEffect(() => {
    if (!el.current) return;
    const width = el.current.clientWidth || 600;
    const pair = series.filter((s) => s.bars).length === 2;
    const bars = bucketMs ? uPlot.paths.bars!({ size: [0.8, Infinity], align: 1 }) : uPlot.paths.bars!({ size: [0.7, 24] });
    const left = pair ? uPlot.paths.bars!({ size: [0.35, 12], align: -1 }) : bars;
    const right = pair ? uPlot.paths.bars!({ size: [0.35, 12], align: 1 }) : bars;
    let barsSeen = 0;
    const steps = bucketMs ? uPlot.paths.stepped!({ align: 1 }) : undefined;
    // the closing point (chartData) reads as the last bucket in the legend
    const shown = (u: uPlot, idx: number) => (bucketMs && idx === u.data[0].length - 1 ? Math.max(0, idx - 1) : idx);
    const opts: uPlot.Options = {
      width,
      height,
      legend: { live: true },
      // room on the right for half a time label: a tick at the chart's right edge ("10:25 PM") was cut
      padding: [null, 32, null, null],
      cursor: { drag: { x: false, y: false } },
      // Bars side by side stand beside their bucket's time: half a bucket more at each end keeps the first's and the last's in the chart.
      scales: { x: pair && times.length > 1 ? { time: true, range: (_u, min, max) => [min - (times[1]! - times[0]!) / 2000, max + (times[1]! - times[0]!) / 2000] } : { time: true } },
      axes: [
        // the time axis in the legend's words (format.ts timeTicks: "08:25 AM", not uPlot's "8:25am"), its
        // ticks far enough apart for them; a chart of days ticks whole days (a noon tick has no bucket)
        {
          stroke: "#6b7280",
          grid: { stroke: "#eef0f3" },
          ticks: { stroke: "#e5e7eb" },
          space: 72,
          ...(bucketMs && bucketMs >= 86_400_000 ? { incrs: DAY_TICKS } : {}),
          values: (_u, splits, _axis, _space, incr) => timeTicks(splits, incr),
        },
        { stroke: "#6b7280", grid: { stroke: "#eef0f3" }, ticks: { stroke: "#e5e7eb" }, size: valueAxisSize, values: (_u, vals, _axis, _space, incr) => axisTicks(vals, incr) },
      ],
      // The legend shows the values under the pointer; with the pointer elsewhere (uPlot passes no
      // index), the latest bucket's, its time marked "latest".
      series: [
        {
          value: (u, _v, _s, idx) => {
            if (idx == null) return latest(u, 0, (t) => `${chartTime(t * 1000, bucketMs)} (latest)`, bucketMs ? 1 : 0);
            const t = u.data[0][shown(u, idx)];
            return t == null ? "–" : chartTime(t * 1000, bucketMs);
          },
        },
        ...series.map((s) => {
          const fmt = (v: number) => (s.fmt ? s.fmt(v) : compact(v));
          return {
            label: s.label,
            stroke: s.color,
            width: s.bars ? 0 : 2,
            fill: s.bars ? s.color : `${s.color}22`,
            paths: s.bars ? (pair ? (barsSeen++ === 0 ? left : right) : bars) : steps,
            points: { show: false },
            value: (u: uPlot, _v: number | null, sidx: number, idx: number | null) => {
              if (idx == null) return latest(u, sidx, fmt, bucketMs ? 1 : 0);
              const v = (u.data[sidx] as ArrayLike<number | null | undefined>)[shown(u, idx)];
              return v == null ? "–" : fmt(v);
            },
          };
        }),
      ],
    };
    plot.current = new uPlot(opts, chartData(times, series, bucketMs), el.current);
    const ro = new ResizeObserver(() => {
      if (el.current && plot.current) plot.current.setSize({ width: el.current.clientWidth, height });
    });
    ro.observe(el.current);
    return () => {
      ro.disconnect();
      plot.current?.destroy();
      plot.current = undefined;
    };
  }, [key, height]);
  useEffect(() => {
    plot.current?.setData(chartData(times, series, bucketMs));
  }, [times, series]);
  return <div class="chart" ref={el} />;
}

/**
 * The value axis's width in CSS px: its longest tick label as drawn in the axis's font, plus the tick
 * and the gap, at least 56 (uPlot's fixed size cut labels such as "0.00015" at the chart's left edge).
 * uPlot calls it again after laying the axis out (`cycle`); from the third call it keeps its size.
 */
function valueAxisSize(u: uPlot, values: string[] | null, axisIdx: number, cycle: number): number {
  const axis = u.axes[axisIdx] as uPlot.Axis & { _size?: number; font?: [string, number] };
  if (cycle > 1 && axis._size !== undefined) return axis._size;
  const longest = (values ?? []).reduce((a, v) => (v.length > a.length ? v : a), "");
  let width = 0;
  if (longest && axis.font) {
    u.ctx.font = axis.font[0];
    width = u.ctx.measureText(longest).width / devicePixelRatio;
  }
  return Math.max(56, Math.ceil(width + (axis.ticks?.size ?? 10) + (axis.gap ?? 5) + 4));
}

/**
 * Series `sidx`'s value (0: the time) in the latest bucket that has a value in any series, formatted;
 * "–" when there is none. `skip`: points at the end that are no bucket (the closing point of chartData).
 */
function latest(u: uPlot, sidx: number, fmt: (v: number) => string, skip = 0): string {
  const at = (j: number, i: number) => (u.data[j] as ArrayLike<number | null | undefined> | undefined)?.[i];
  for (let i = u.data[0].length - 1 - skip; i >= 0; i--) {
    for (let j = 1; j < u.data.length; j++) {
      if (at(j, i) == null) continue;
      const v = at(sidx, i);
      return v == null ? "–" : fmt(v);
    }
  }
  return "–";
}

function compact(v: number): string {
  if (Math.abs(v) >= 1e6) return `${+(v / 1e6).toFixed(1)}M`;
  if (Math.abs(v) >= 1e3) return `${+(v / 1e3).toFixed(1)}k`;
  if (Math.abs(v) > 0 && Math.abs(v) < 1) return `${+v.toFixed(3)}`;
  return `${+v.toFixed(1)}`;
}

/**
 * A button that shows it is busy while its action runs. While busy it is `aria-disabled` and ignores
 * clicks rather than `disabled`: a disabled button loses the keyboard focus to the page body (try18
 * D18: Disable/Enable on a key), and one click runs the action once all the same.
 */
export function ActionButton({ onClick, children, tone, small, disabled, title }: { onClick: () => Promise<unknown>; children: ComponentChildren; tone?: "danger" | "primary"; small?: boolean; disabled?: boolean; title?: string }) {
  const [busy, setBusy] = useState(false);
  const running = useRef(false);
  return (
    <button
      type="button"
      title={title}
      class={`btn ${tone ? `btn-${tone}` : ""} ${small ? "btn-small" : ""}`}
      disabled={disabled}
      aria-disabled={busy ? "true" : undefined}
      onClick={() => {
        if (running.current) return;
        running.current = true;
        setBusy(true);
        void onClick().finally(() => {
          running.current = false;
          setBusy(false);
        });
      }}
    >
      {busy ? "…" : children}
    </button>
  );
}

/**
 * Longest name {@link Breakable} wraps: a longer one (a client can send any model name, such as a
 * 5,000-character Gemini path) is one line cut with "…", as the command line cuts a table cell.
 */
export const LONG_NAME = 64;

/**
 * A `provider/model` name that wraps after its slash, each part kept whole (a `.name-part` inline
 * block: it moves to the next line as a unit, so no "claude-sonnet-4-" / "5" or "demo-" / "gemini/"
 * split); only a part wider than its whole column breaks, anywhere, rather than run past its card. The
 * text reads and copies the same. A name longer than {@link LONG_NAME} characters is one line cut with
 * an ellipsis (`.name-cut`), whole in its title (a tooltip) and when copied: wrapped, a client's
 * 5,000-character name made its Calls row about 3,000 px tall. Its box (`.name-fit`) is up to 40
 * characters wide but asks its column for none: a table gives it the room the other columns leave
 * (each cut name holding 40 characters, a Calls row with a long requested and a long served name was
 * wider than its card at 1280 px, Total out of view).
 */
export function Breakable({ name }: { name: string }) {
  if (name.length > LONG_NAME) {
    return (
      <span class="name-fit">
        <span class="name-cut" title={name}>
          {name}
        </span>
      </span>
    );
  }
  const parts = name.split("/");
  return (
    <>
      {parts.map((p, i) => (
        <Fragment key={i}>
          <span class="name-part">{i < parts.length - 1 ? `${p}/` : p}</span>
          {i < parts.length - 1 && <wbr />}
        </Fragment>
      ))}
    </>
  );
}
