/** The screens, by route. */
import { assistantsPage } from "./assistants";
import { chatPage } from "./chat";
import { experimentsPage } from "./experiments";
import { historyPage } from "./history";
import { sdkPage } from "./sdk";

export function render(route: string, id: string | undefined): Promise<HTMLElement> {
  switch (route) {
    case "assistants":
      return assistantsPage(id);
    case "experiments":
      return experimentsPage();
    case "sdk":
      return sdkPage();
    case "history":
      if (id) return historyPage(id);
      return chatPage(undefined);
    default:
      return chatPage(id);
  }
}
