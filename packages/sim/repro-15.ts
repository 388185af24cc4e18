import fc from "fast-check";
import { knobArbitrary, retryAmplification } from "@tideward/sim";
const k = retryAmplification.knobs.find((x) => x.name === "attempts")!;
console.log(Object.isFrozen(k), k);
try { (k as { max: number }).max = 9000; console.log(retryAmplification.resolve({ attempts: 9000 })); } catch (e) { console.log(String(e)); }
try { console.log(retryAmplification.resolve({ attempts: 500000000.5 })); } catch (e) { console.log(String(e)); }
try { knobArbitrary(fc, [{ kind: "integer", name: "x", label: "", doc: "", default: 1, min: 3, max: 1, step: 1 }]); } catch (e) { console.log(String(e)); }
try { knobArbitrary(fc, [{ kind: "number", name: "x", label: "", doc: "", default: 1, min: 3, max: 1, step: 1 }]); } catch (e) { console.log(String(e)); }
