/**
 * The studio (the web app `graphdock serve` shows at /studio) on the runtime in this tab: the
 * official client inside it sends its requests to graphdock's in-page fetch handler, so nothing
 * leaves the page. Its routes live in the hash after `#/studio/`.
 */
import { handler } from "../app";
import { h } from "../dom";

let studio: HTMLElement | undefined;

export async function studioPage(): Promise<HTMLElement> {
  if (!studio) {
    const { mountStudio } = await import("../lib-studio");
    studio = h("div", { class: "studio-frame", "data-testid": "studio" });
    mountStudio(studio, {
      apiUrl: "http://graphdock.local", // only parsed, never contacted
      fetch: (input, init) => handler(new Request(input, init)),
      routes: { hash: "#/studio/" },
      title: "graphdock studio · this tab",
      isolate: true, // in a shadow root: the example's styles stay out of the studio and the studio's out of the example
    });
  }
  return studio;
}
