/**
 * The configuration is checked with zod's small build (`zod/mini`, tree-shaken: the full build
 * costs every process ~20 ms to load). The small build sets no messages of its own: this sets the
 * English ones the full build sets by default, so an invalid variable reads "Too big: expected
 * number to be <=65535". Imported for that effect by every module that parses configuration.
 */
import { config } from "zod/mini";
import en from "zod/v4/locales/en.js";

config(en());
