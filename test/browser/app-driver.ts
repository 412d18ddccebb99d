/** Drives the example app's chat (examples/browser) in a Playwright page, for the app tests. */
import type { Locator, Page } from "playwright-core";

export function appDriver(page: () => Page) {
  /** Waits until the current route has rendered. */
  const settled = async (route: string): Promise<void> => {
    await page().waitForSelector(`main[data-route="${route}"]:not([aria-busy])`);
  };
  /** The chat's message bubbles of one kind. */
  const messages = (who: "human" | "ai" | "tool"): Locator => page().getByTestId(`message-${who}`);
  /** Types `text` into the composer and sends it. */
  const send = async (text: string): Promise<void> => {
    await page().getByTestId("composer-input").fill(text);
    await page().getByTestId("send").click();
  };
  /** Waits for the run to finish: the indicator hides and the send button is enabled again. */
  const runFinished = async (): Promise<void> => {
    await page().waitForSelector('[data-testid="streaming"][hidden]', { state: "attached" });
    await page().waitForSelector('[data-testid="send"]:not([disabled])');
  };
  return { settled, messages, send, runFinished };
}
