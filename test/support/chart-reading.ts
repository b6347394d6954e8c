/**
 * Reading a uPlot chart of the dashboard in a browser test as its reader does: the labels drawn under
 * its time axis (the canvas's text, recorded as the page draws it), and its legend with the pointer
 * over a given point (a tick, or the bucket of a given time).
 */
import type { Locator, Page } from "playwright-core";

/**
 * Makes every page of `target` keep the text its canvases draw: each canvas element's `__texts` holds
 * the `fillText` calls (text, x and y in canvas pixels, the text alignment) since its last full clear
 * (uPlot clears the whole canvas before each redraw), so a test reads what the last drawing shows.
 * Call before the page loads (an init script, which the page's Content-Security-Policy does not govern).
 */
export async function recordCanvasText(target: Pick<Page, "addInitScript">): Promise<void> {
  await target.addInitScript(`(() => {
    const P = CanvasRenderingContext2D.prototype;
    const clear = P.clearRect;
    const fill = P.fillText;
    P.clearRect = function (x, y, w, h) {
      if (x <= 0 && y <= 0 && w >= this.canvas.width && h >= this.canvas.height) this.canvas.__texts = [];
      return clear.apply(this, arguments);
    };
    P.fillText = function (text, x, y) {
      (this.canvas.__texts = this.canvas.__texts || []).push({ text: String(text), x, y, align: this.textAlign });
      return fill.apply(this, arguments);
    };
  })()`);
}

/** One tick label under a chart's time axis: where it stands (page CSS px) and its lines, top first. */
export interface TimeTick {
  x: number;
  lines: string[];
}

/**
 * The labels under the time axis of the chart in `card` as last drawn (needs {@link recordCanvasText}),
 * left to right: the centred texts of its canvas (the value axis's are right-aligned), the lines of one
 * label sharing its x.
 */
export async function timeAxisTicks(card: Locator): Promise<TimeTick[]> {
  return card.locator("canvas").first().evaluate((c: any) => {
    const r = c.getBoundingClientRect();
    const scale = r.width / c.width;
    const byX = new Map<number, { text: string; x: number; y: number; align: string }[]>();
    for (const t of (c.__texts ?? []) as { text: string; x: number; y: number; align: string }[]) {
      if (t.align !== "center") continue;
      byX.set(t.x, [...(byX.get(t.x) ?? []), t]);
    }
    return [...byX.entries()].sort((a, b) => a[0] - b[0]).map(([x, ts]) => ({ x: r.left + x * scale, lines: ts.sort((a, b) => a.y - b.y).map((t) => t.text) }));
  });
}

/** The legend of the chart in `card`: its rows' label and value, the time's row first. */
export async function legendRows(card: Locator): Promise<[string, string][]> {
  return card.locator(".u-legend tr.u-series").evaluateAll((trs) => trs.map((tr): [string, string] => [tr.querySelector(".u-label")?.textContent ?? "", tr.querySelector(".u-value")?.textContent ?? ""]));
}

/**
 * Moves the pointer over the plot of the chart in `card` at page x `x` (mid-height) and waits until its
 * legend's time row reads `time`, then returns the legend's rows.
 * @throws Error naming what the legend read instead after `timeoutMs` (default 5 s).
 */
export async function legendAt(page: Page, card: Locator, x: number, time: string, timeoutMs = 5000): Promise<[string, string][]> {
  const over = await card.locator(".u-over").boundingBox();
  if (!over) throw new Error("the chart has no plot area on screen");
  await page.mouse.move(x, over.y + over.height / 2);
  let rows: [string, string][] = [];
  for (const end = Date.now() + timeoutMs; ; await Bun.sleep(50)) {
    rows = await legendRows(card);
    if (rows[0]?.[1] === time) return rows;
    if (Date.now() > end) throw new Error(`with the pointer at x ${x} the legend's time read ${JSON.stringify(rows[0]?.[1])}, not ${JSON.stringify(time)}`);
  }
}

/**
 * The page x of time `t` (ms) on the chart in `card` whose time scale runs from `from` to `to` (ms: the
 * first bucket's start and the last one's end, which a TimeChart with buckets spans).
 */
export async function xOfTime(card: Locator, t: number, from: number, to: number): Promise<number> {
  const over = await card.locator(".u-over").boundingBox();
  if (!over) throw new Error("the chart has no plot area on screen");
  return over.x + ((t - from) / (to - from)) * over.width;
}
