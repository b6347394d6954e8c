/**
 * Reading a uPlot chart's canvas in a browser test: where a series' colour stands, so a test can tell
 * steps (flat across a bucket, a vertical edge between levels) from lines sloping between buckets.
 */
import type { Page } from "playwright-core";

/** Where one colour stands on a canvas (device pixels). */
export interface ColourSpans {
  /** The canvas's width. */
  width: number;
  /** The topmost and the lowest row holding the colour. */
  top: number;
  bottom: number;
  /** The leftmost and rightmost x of the colour in the topmost row (±1 row). */
  topLeft: number;
  topRight: number;
  /** The x span (rightmost − leftmost) of the colour in the rows more than `margin` from `top` and `bottom`. */
  midSpan: number;
  /** How many columns hold the colour in those rows (a step's vertical edge: its line's width; a slope: a bucket's width). */
  midColumns: number;
}

/**
 * Where the canvas `selector` holds the colour `hex` (`#rrggbb`, within 8 levels a channel, opaque:
 * alpha over 240). `margin`: rows next to either level left out of the middle band (a line's width and
 * some; default 3). Read in the page (a string: the root tsconfig has no DOM types).
 */
export async function colourSpans(page: Page, selector: string, hex: string, margin = 3): Promise<ColourSpans> {
  return page.evaluate(`(() => {
    const c = document.querySelector(${JSON.stringify(selector)});
    const { width, height } = c;
    const d = c.getContext("2d").getImageData(0, 0, width, height).data;
    const want = [${parseInt(hex.slice(1, 3), 16)}, ${parseInt(hex.slice(3, 5), 16)}, ${parseInt(hex.slice(5, 7), 16)}];
    const hits = [];
    for (let y = 0; y < height; y++) for (let x = 0; x < width; x++) {
      const i = (y * width + x) * 4;
      if (d[i + 3] > 240 && Math.abs(d[i] - want[0]) < 8 && Math.abs(d[i + 1] - want[1]) < 8 && Math.abs(d[i + 2] - want[2]) < 8) hits.push([x, y]);
    }
    const top = Math.min(...hits.map((h) => h[1]));
    const bottom = Math.max(...hits.map((h) => h[1]));
    const topXs = hits.filter((h) => h[1] <= top + 1).map((h) => h[0]);
    const midXs = hits.filter((h) => h[1] > top + ${margin} && h[1] < bottom - ${margin}).map((h) => h[0]);
    return { width, top, bottom, topLeft: Math.min(...topXs), topRight: Math.max(...topXs), midSpan: midXs.length ? Math.max(...midXs) - Math.min(...midXs) : 0, midColumns: new Set(midXs).size };
  })()`);
}
