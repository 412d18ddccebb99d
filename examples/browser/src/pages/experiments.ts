/** Upload experiment files (the upload endpoint's JSON) and compare experiments of one dataset. */
import { runtime } from "../app";
import { compareReport } from "../lib";
import { guard, h, mount, refresh, shortId, time } from "../dom";

/** The sample uploads of examples/upload, bundled so the page works offline. */
const samples = import.meta.glob<unknown>("../../../upload/*.json", { eager: true, import: "default" });

async function upload(bodies: { name: string; body: unknown }[]): Promise<void> {
  for (const { name, body } of bodies) {
    try {
      await runtime.experiments.upload(body as Parameters<typeof runtime.experiments.upload>[0]);
    } catch (err) {
      // Keep the file name with the reason, so the person knows which file to fix.
      throw Object.assign(err as Error, { message: `${name}: ${(err as Error).message}` });
    }
  }
}

async function readFiles(files: FileList): Promise<{ name: string; body: unknown }[]> {
  return Promise.all(
    [...files].map(async (file) => {
      try {
        return { name: file.name, body: JSON.parse(await file.text()) as unknown };
      } catch {
        throw new Error(`${file.name} is not valid JSON: upload the request body of the upload-experiment endpoint.`);
      }
    }),
  );
}

export async function experimentsPage(): Promise<HTMLElement> {
  const experiments = await runtime.experiments.list();
  const datasets = await runtime.datasets.list();
  const report = h("div", { class: "report-slot" });

  const fileInput = h("input", { type: "file", accept: ".json,application/json", multiple: true, "data-testid": "experiment-file" });
  fileInput.addEventListener("change", () => {
    const files = fileInput.files;
    if (!files || files.length === 0) return;
    void guard(async () => {
      await upload(await readFiles(files));
      fileInput.value = "";
      refresh();
    });
  });
  const sampleButton = h("button", { "data-testid": "load-samples" }, `Upload the ${Object.keys(samples).length} sample files`);
  sampleButton.addEventListener("click", () =>
    void guard(async () => {
      await upload(Object.entries(samples).map(([path, body]) => ({ name: path.split("/").pop() ?? path, body })));
      refresh();
    }, sampleButton),
  );

  async function compare(ids: string[]): Promise<void> {
    const comparison = await runtime.experiments.compare(ids);
    const frame = h("iframe", { class: "report", title: "Comparison report", "data-testid": "report" });
    frame.srcdoc = compareReport(comparison);
    frame.addEventListener("load", () => {
      const doc = frame.contentDocument;
      if (doc) frame.style.height = `${doc.documentElement.scrollHeight + 16}px`;
    });
    mount(report, h("h3", null, "Comparison"), frame);
  }

  const groups = datasets.map((d) => {
    const own = experiments.filter((e) => (e.reference_dataset_id ?? (e as { dataset_id?: string }).dataset_id) === d.id);
    const boxes = own.map((e) => h("input", { type: "checkbox", value: e.id, checked: true }));
    const button = h("button", { class: "primary", "data-testid": "compare" }, "Compare selected");
    button.addEventListener("click", () =>
      void guard(async () => {
        const ids = boxes.filter((b) => b.checked).map((b) => b.value);
        if (ids.length < 2) throw new Error("Select at least two experiments of the same dataset to compare.");
        await compare(ids);
      }, button),
    );
    return h(
      "div",
      { class: "card dataset", "data-testid": "dataset" },
      h("div", { class: "row spread" }, h("h3", null, d.name), h("small", { class: "muted" }, shortId(d.id))),
      h(
        "ul",
        { class: "experiment-list" },
        own.map((e, i) =>
          h(
            "li",
            { "data-testid": "experiment" },
            h("label", null, boxes[i], " ", h("strong", null, e.name)),
            h("small", { class: "muted" }, ` ${e.run_count ?? 0} runs · ${time(e.start_time)}`),
          ),
        ),
      ),
      own.length >= 2 ? button : h("p", { class: "muted" }, "Upload another experiment on this dataset to compare."),
    );
  });

  return h(
    "section",
    { class: "page experiments" },
    h("h2", null, "Experiments"),
    h(
      "p",
      { class: "muted" },
      "Upload results run elsewhere (the body of POST /api/v1/datasets/upload-experiment, as a .json file). They are stored in this tab's IndexedDB; experiments on one dataset compare row by row.",
    ),
    h("div", { class: "card row" }, h("label", { class: "file" }, "Choose files…", fileInput), sampleButton),
    groups.length === 0 ? h("p", { class: "muted" }, "No experiments yet.") : groups,
    report,
  );
}
