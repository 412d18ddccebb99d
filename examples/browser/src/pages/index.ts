/** The screens, by route. */
import { assistantsPage } from "./assistants";
import { chatPage } from "./chat";
import { experimentsPage } from "./experiments";
import { historyPage } from "./history";
import { sdkPage } from "./sdk";
import { studioPage } from "./studio";

export function render(route: string, id: string | undefined): Promise<HTMLElement> {
  switch (route) {
    case "assistants":
      return assistantsPage(id);
    case "experiments":
      return experimentsPage();
    case "sdk":
      return sdkPage();
    case "studio":
      return studioPage();
    case "history":
      if (id) return historyPage(id);
      return chatPage(undefined);
    default:
      return chatPage(id);
  }
}
