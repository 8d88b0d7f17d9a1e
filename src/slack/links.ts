export { messageLink } from "./blocks/links.js";
