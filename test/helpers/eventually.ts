/**
 * The one polling helper of the tests. It lives beside the simulators (`test/sim/eventually.ts`)
 * because the sandbox, which the image ships, waits with it too; tests import it from here.
 */
export { eventually, eventuallyTrue } from "../sim/eventually.js";
