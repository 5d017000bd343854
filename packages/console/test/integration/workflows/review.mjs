// The example `review`, served beside `planted` by the console's browser suite.
export { machine } from "../../../../../examples/workflows/review.ts";
