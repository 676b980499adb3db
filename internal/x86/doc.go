// Package x86 is utap's one home for x86-64 instruction knowledge shared by
// the engines: decoding safe for walking code (x86asm with its gaps fixed;
// no other package calls x86asm.Decode), encoding (Asm, a typed front end
// to Go's own assembler, for jump pads and native probe code), instruction
// lengths, the operand layout (prefixes, REX, VEX/EVEX, opcode map, ModRM,
// RIP-relative displacement), the scan for a function's RET instructions,
// a Go prologue's stack-limit check and an instruction's text for messages.
// ssol builds slots and emulation on it, the uprobe engine its refusals,
// elfsym its instruction-boundary checks and Go entry points, uretprobe and
// compare their return sites.
package x86
