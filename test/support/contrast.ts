/**
 * Text contrast as a reader sees it, measured in the browser (WCAG 2.2 success criterion 1.4.3,
 * "Contrast (Minimum)", level AA): every piece of visible text — an element's own text, a form field's
 * value and its placeholder — against the background drawn behind it, from the computed CSS colours.
 * Normal text needs 4.5:1; large text (at least 24 px, or 18.66 px and bold) 3:1. Text of a disabled
 * control is exempt (as WCAG says). The background is found by walking up the element's ancestors and
 * compositing their background colours (alpha included) down to the first opaque one; a gradient counts
 * as each of its colour stops (the worst one decides). Text drawn in a canvas (chart axes) is not seen.
 * Form fields' outlines are measured the same way against 3:1 (1.4.11, {@link controlOutlineMisses}).
 */
import type { Page } from "playwright-core";

/** One piece of text below its contrast minimum. */
export interface ContrastMiss {
  /** The element: tag, id and classes, and its nearest `data-*` marked ancestor's marker. */
  where: string;
  /** The text (first 60 characters). */
  text: string;
  /** Contrast ratio, two decimals. */
  ratio: number;
  /** The minimum that applies (4.5 or 3). */
  min: number;
  /** Text and background colour as `rgb(r, g, b)`, after compositing. */
  fg: string;
  bg: string;
}

/** A form field whose outline is below 3:1 against the colour around it (WCAG 1.4.11). */
export interface OutlineMiss {
  /** The field: tag, id and classes, and its nearest `data-*` marked ancestor's marker. */
  where: string;
  /** Contrast of its border against the colour around it, two decimals. */
  ratio: number;
  /** Border, the field's own background and the colour around it, as `rgb(r, g, b)` after compositing. */
  border: string;
  fill: string;
  around: string;
}

/**
 * Every visible text of `page` below its WCAG AA minimum (empty when all pass). Runs in the page;
 * `scope` (a CSS selector) limits it to part of the page.
 */
export async function contrastMisses(page: Page, scope = "body"): Promise<ContrastMiss[]> {
  return (await measure(page, scope)).text;
}

/**
 * Every visible, enabled form field of `page` (text inputs, selects, text areas) that a reader cannot
 * make out against the colour around it (WCAG 2.2 success criterion 1.4.11, "Non-text Contrast", level
 * AA: a control's visual boundary needs 3:1 against adjacent colours): its border below 3:1 against the
 * background behind the field, unless its own fill already stands out by 3:1. Check boxes and radio
 * buttons are drawn by Chromium (its own outline colours) and are left out. Empty when all pass.
 */
export async function controlOutlineMisses(page: Page, scope = "body"): Promise<OutlineMiss[]> {
  return (await measure(page, scope)).outlines;
}

/** Both measures in one pass over the page (see {@link contrastMisses} and {@link controlOutlineMisses}). */
async function measure(page: Page, scope: string): Promise<{ text: ContrastMiss[]; outlines: OutlineMiss[] }> {
  return page.evaluate((scopeSel: string) => {
    // the page's globals (this file is compiled without the DOM library)
    const win = globalThis as any;
    type Element = any;
    const getComputedStyle = (el: Element, pseudo?: string): { [k: string]: string } => win.getComputedStyle(el, pseudo);
    type RGBA = [number, number, number, number];
    const parse = (c: string): RGBA | undefined => {
      const m = c.match(/rgba?\(([^)]+)\)/);
      if (!m) return undefined;
      const p = m[1]!.split(/[ ,/]+/).filter(Boolean).map(Number);
      return [p[0]!, p[1]!, p[2]!, p[3] ?? 1];
    };
    const over = (top: RGBA, under: RGBA): RGBA => {
      const a = top[3];
      return [top[0] * a + under[0] * (1 - a), top[1] * a + under[1] * (1 - a), top[2] * a + under[2] * (1 - a), 1];
    };
    const lum = (c: RGBA) => {
      const f = (v: number) => {
        const s = v / 255;
        return s <= 0.03928 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
      };
      return 0.2126 * f(c[0]) + 0.7152 * f(c[1]) + 0.0722 * f(c[2]);
    };
    const ratio = (a: RGBA, b: RGBA) => {
      const [x, y] = [lum(a), lum(b)];
      return (Math.max(x, y) + 0.05) / (Math.min(x, y) + 0.05);
    };
    const rgb = (c: RGBA) => `rgb(${Math.round(c[0])}, ${Math.round(c[1])}, ${Math.round(c[2])})`;
    /** The backgrounds behind `el` (several when a gradient is in the way), composited. */
    const backgrounds = (el: Element): RGBA[] => {
      const layers: RGBA[][] = [];
      for (let n: Element | null = el; n; n = n.parentElement) {
        const cs = getComputedStyle(n);
        const stops = cs.backgroundImage.includes("gradient") ? [...cs.backgroundImage.matchAll(/rgba?\([^)]+\)/g)].map((m) => parse(m[0])!) : [];
        const color = parse(cs.backgroundColor);
        if (stops.length) layers.push(stops);
        if (color && color[3] > 0) layers.push([color]);
        if ((color && color[3] >= 1) || (stops.length && stops.every((s) => s[3] >= 1))) break;
      }
      let out: RGBA[] = [[255, 255, 255, 1]]; // the canvas behind everything
      for (let i = layers.length - 1; i >= 0; i--) out = layers[i]!.flatMap((top) => out.map((under) => over(top, under)));
      return out;
    };
    const opacity = (el: Element) => {
      let o = 1;
      for (let n: Element | null = el; n; n = n.parentElement) o *= Number(getComputedStyle(n).opacity);
      return o;
    };
    const describe = (el: Element) => {
      const marked = el.closest("[data-page],[data-combo],[data-alias],[data-key],[data-account],[data-notice],[data-route-id]");
      const mark = marked ? [...marked.attributes].filter((a) => a.name.startsWith("data-")).map((a) => `${a.name}=${a.value}`)[0] : "";
      return `${el.tagName.toLowerCase()}${el.id ? `#${el.id}` : ""}${[...el.classList].map((c) => `.${c}`).join("")}${mark ? ` in [${mark}]` : ""}`;
    };
    const misses: ContrastMiss[] = [];
    const check = (el: Element, text: string, color: string) => {
      const fg0 = parse(color);
      if (!fg0) return;
      const cs = getComputedStyle(el);
      const size = parseFloat(cs.fontSize);
      const bold = Number(cs.fontWeight) >= 700;
      const min = size >= 24 || (size >= 18.66 && bold) ? 3 : 4.5;
      const o = opacity(el);
      for (const bg of backgrounds(el)) {
        const fg = over([fg0[0], fg0[1], fg0[2], fg0[3] * o], bg);
        const r = ratio(fg, bg);
        if (r < min) {
          misses.push({ where: describe(el), text: text.trim().slice(0, 60), ratio: Math.round(r * 100) / 100, min, fg: rgb(fg), bg: rgb(bg) });
          return;
        }
      }
    };
    const outlines: OutlineMiss[] = [];
    /** A field's border against the background around it (1.4.11), unless its own fill stands out. */
    const outline = (el: Element) => {
      const cs = getComputedStyle(el);
      const border = parse(cs.borderTopColor);
      if (!border || parseFloat(cs.borderTopWidth) === 0 || cs.borderTopStyle === "none") return;
      const around = backgrounds(el.parentElement);
      for (const out of around) {
        const fill0 = parse(cs.backgroundColor) ?? [0, 0, 0, 0];
        const fill = over(fill0, out);
        if (ratio(fill, out) >= 3) continue;
        const b = over(border, out);
        const r = ratio(b, out);
        if (r < 3) {
          outlines.push({ where: describe(el), ratio: Math.round(r * 100) / 100, border: rgb(b), fill: rgb(fill), around: rgb(out) });
          return;
        }
      }
    };
    const root: Element | null = win.document.querySelector(scopeSel);
    if (!root) return { text: misses, outlines };
    for (const el of [root, ...root.querySelectorAll("*")]) {
      const cs = getComputedStyle(el);
      if (cs.visibility !== "visible" || el.getClientRects().length === 0) continue;
      if (el.closest(":disabled")) continue;
      if (el instanceof win.HTMLInputElement || el instanceof win.HTMLTextAreaElement || el instanceof win.HTMLSelectElement) {
        if (el.type !== "checkbox" && el.type !== "radio" && el.type !== "hidden") outline(el);
      }
      if (el instanceof win.HTMLInputElement || el instanceof win.HTMLTextAreaElement) {
        if (el.type === "checkbox" || el.type === "radio" || el.type === "hidden") continue;
        if (el.value) check(el, el.type === "password" ? "••••" : el.value, cs.color);
        else if (el.placeholder) check(el, el.placeholder, getComputedStyle(el, "::placeholder").color);
        continue;
      }
      if (el instanceof win.HTMLSelectElement) {
        check(el, el.selectedOptions[0]?.text ?? "", cs.color);
        continue;
      }
      if (el.closest("select, canvas, svg")) continue;
      const own = [...el.childNodes].filter((n) => n.nodeType === 3 /* a text node */ && n.textContent!.trim() !== "").map((n) => n.textContent).join(" ");
      if (own) check(el, own, cs.color);
    }
    return { text: misses, outlines };
  }, scope);
}
