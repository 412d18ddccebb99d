import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { compareReport } from "../../src/upload/report-entry.js";
import { shortIds } from "../../src/upload/report.js";
import { launchBrowser } from "../browser/harness.js";
import { request, row, rowId, setup } from "./helpers.js";

const label = (key: string, value: string) => ({ key, value });
const score = (key: string, s: number) => ({ key, score: s });

describe("compareReport: example ids and label-only keys", () => {
  it("shortIds keeps the shortest unique suffix (8 characters at least)", () => {
    expect([...shortIds(["aaaa-0001", "aaaa-0002"]).values()]).toEqual(["…aaa-0001", "…aaa-0002"]);
    expect([...shortIds(["x-123456789", "y-123456789"]).values()]).toEqual(["x-123456789", "y-123456789"]);
    expect([...shortIds(["short", "id"]).values()]).toEqual(["short", "id"]);
  });

  it("shows every example's full id, and a suffix that tells ids sharing a prefix apart", async () => {
    const s = setup();
    // rowId(n) share their first 24 characters: a prefix would show the same text for every row.
    const x = await s.experiments.upload(request({ experiment_name: "x", results: [row(1, 1), row(2, 1), row(3, 1)] }));
    const y = await s.experiments.upload(request({ experiment_name: "y", results: [row(1, 2), row(2, 2), row(3, 2)] }));
    const html = compareReport(await s.experiments.compare([x.experiment.id, y.experiment.id]));
    const shown = [...html.matchAll(/<summary><code title="([^"]+)">([^<]+)<\/code>/g)].map((m) => [m[1], m[2]]);
    expect(shown.map(([full]) => full).sort()).toEqual([rowId(1), rowId(2), rowId(3)]);
    expect(new Set(shown.map(([, text]) => text)).size).toBe(3);
    for (const [full, text] of shown) expect(full!.endsWith(text!.replace("…", ""))).toBe(true);
    for (const n of [1, 2, 3]) expect(html).toContain(`<code class="id">${rowId(n)}</code>`);
  });

  it("renders a key scored only with labels as label shares and label changes, not empty means", async () => {
    const s = setup();
    const x = await s.experiments.upload(
      request({ experiment_name: "x", results: [row(1, 1, { evaluation_scores: [label("tone", "curt"), score("acc", 0)] }), row(2, 1, { evaluation_scores: [label("tone", "curt")] })] }),
    );
    const y = await s.experiments.upload(
      request({ experiment_name: "y", results: [row(1, 1, { evaluation_scores: [label("tone", "friendly"), score("acc", 1)] }), row(2, 1, { evaluation_scores: [label("tone", "curt")] })] }),
    );
    const html = compareReport(await s.experiments.compare([x.experiment.id, y.experiment.id]));
    const tone = /<section class="panel"><h3>tone <small>labels<\/small><\/h3>[\s\S]*?<\/section>/.exec(html)?.[0];
    expect(tone, "a labels table for tone").toBeDefined();
    expect(tone).not.toContain("Mean");
    expect(tone).toContain("Changed vs baseline");
    expect(tone).toMatch(/curt <b>2<\/b> <small>100%<\/small>/);
    expect(tone).toMatch(/friendly <b>1<\/b> <small>50%<\/small>/);
    expect(tone).toMatch(/curt → friendly <b>1<\/b>/);
    // the numeric key keeps its mean and delta
    expect(html).toMatch(/<h3>acc <small>higher is better/);
    expect(html).toMatch(/class="n delta good[^"]*">\+1</);
  });
});

describe("compareReport layout in Chromium", () => {
  it("fits its tables in the browser example's report frame (1160 px) and at 960 px, with label-only keys", async () => {
    // The three sample experiments, plus a label-only key ("tone") on every row.
    const s = setup();
    const dir = new URL("../../examples/upload/", import.meta.url).pathname;
    const ids: string[] = [];
    let i = 0;
    for (const f of readdirSync(dir).filter((f) => f.endsWith(".json")).sort()) {
      const body = JSON.parse(readFileSync(join(dir, f), "utf8"));
      for (const r of body.results) r.evaluation_scores = [...(r.evaluation_scores ?? []), label("tone", ["curt", "friendly", "neutral"][i++ % 3]!)];
      ids.push((await s.experiments.upload(body)).experiment.id);
    }
    const html = compareReport(await s.experiments.compare(ids));
    const browser = await launchBrowser();
    try {
      const page = await browser.newPage();
      for (const width of [1160, 960]) {
        await page.setViewportSize({ width, height: 900 });
        await page.setContent(html);
        const overflowing = await page.evaluate(() =>
          [document.documentElement, ...document.querySelectorAll(".panel, .examples, .cards, .charts")]
            .filter((el) => el.scrollWidth > el.clientWidth + 1)
            .map((el) => `${el.className || el.tagName} ${el.textContent?.trim().slice(0, 30)}: ${el.scrollWidth} > ${el.clientWidth}`),
        );
        expect(overflowing, `at ${width} px`).toEqual([]);
      }
    } finally {
      await browser.close();
    }
  }, 60_000);
});
