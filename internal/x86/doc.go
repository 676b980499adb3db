// Package x86 is utap's one home for x86-64 instruction knowledge shared by
// the engines: decoding safe for walking code (x86asm with its gaps fixed),
// encoding (Asm, a typed front end to Go's own assembler, for jump pads and
// native probe code), instruction lengths, the operand layout (prefixes,
// REX, VEX/EVEX, opcode map, ModRM, RIP-relative displacement) and the scan
// for a function's RET instructions. ssol builds slots and emulation on it,
// the uprobe engine its refusals, elfsym its instruction-boundary checks,
// uretprobe and compare their return sites.
package x86
