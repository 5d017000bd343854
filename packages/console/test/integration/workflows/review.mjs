// The plain review loop (ADR-0228: the example `review` is on a Repo Slot), served as `review`
// beside `planted` by the console's browser suite.
export { machine } from "../../../../orchestrator/test/fixtures/plain-review/review.ts";
