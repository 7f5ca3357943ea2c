// Go's JSON encoding lives in golang/json.ts; these names stay importable from here for the
// serve package (serve/gojson.ts).
export { compareGoStrings, goNumber, goString } from '../golang/json.js';
