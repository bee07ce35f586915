# fastpath_order.awk: in one function's disassembly (AT&T, objdump
# --no-show-raw-insn, one instruction a line), check that every store
# through the pointer fields named in STORES (space-separated byte offsets
# into the struct the first argument points to) comes before the first
# load through the pointer field at offset LOAD. Prints "ok" or the reason.
#
# It follows registers loosely: a "mov DISP(%base),%reg" with base the
# struct pointer (%rdi on entry, or a register it was copied to) tags %reg
# with DISP; add/lea carry a tag to their destination; any other write to
# a register, and a call for the caller-saved ones, drops its tag. The
# code is read in text order, not by paths, so copies of the struct
# pointer stay known once made (a "pop" on an early return must not make
# the rest of the function unreadable).
#
# Arrays of structs inside the struct (the pool's classes): a "lea" of an
# address based on the struct pointer, or an "add" of the struct pointer
# to a register, makes an element pointer (known
# until the register is written otherwise), DISP(%base,%index,...) loads
# tag as plain ones do, and "add DISP(%base),%reg" (a pointer field added
# to an offset) tags %reg with DISP. DISP is then the field's offset in
# element 0, which is what STORES and LOAD give.
function norm(r) {
	sub(/^%/, "", r)
	if (r ~ /^r[0-9]+[dwb]?$/) { sub(/[dwb]$/, "", r); return r }
	if (r ~ /^e/) r = "r" substr(r, 2)
	else if (r ~ /^[a-d]l$/) r = "r" substr(r, 1, 1) "x"
	else if (r ~ /^(si|di|bp|sp)l$/) r = "r" substr(r, 1, 2)
	else if (r ~ /^[a-ds][xip]$/ || r ~ /^[sb]p$/) r = "r" r
	return r
}
# base register of the memory operand in s, or ""
function membase(s,   m) {
	if (!match(s, /\(%[a-z0-9]+/)) return ""
	return norm(substr(s, RSTART + 1, RLENGTH - 1))
}
function hex(h,   v, i) {
	v = 0
	h = tolower(h)
	sub(/^0x/, "", h)
	for (i = 1; i <= length(h); i++)
		v = v * 16 + index("0123456789abcdef", substr(h, i, 1)) - 1
	return v
}
function disp(s,   m) {
	if (!match(s, /0x[0-9a-f]+\(/)) return 0
	return hex(substr(s, RSTART, RLENGTH - 1))
}
BEGIN {
	base["rdi"] = 1
	n = split(STORES, st, " ")
	for (i = 1; i <= n; i++) { want[st[i]] = 1; seen[st[i]] = 0 }
	split("rax rcx rdx rsi rdi r8 r9 r10 r11", cs, " ")
	done = 0
}
done { next }
{
	line = $0
	op = $1
	ops = line
	sub(/^[^ \t]+[ \t]+/, "", ops)
	sub(/[ \t]+#.*$/, "", ops)
	sub(/[ \t]+<.*$/, "", ops)
	# split operands at top-level commas
	nops = 0; depth = 0; cur = ""
	for (i = 1; i <= length(ops); i++) {
		c = substr(ops, i, 1)
		if (c == "(") depth++
		if (c == ")") depth--
		if (c == "," && depth == 0) { o[++nops] = cur; cur = ""; continue }
		cur = cur c
	}
	if (cur != "") o[++nops] = cur
	dst = nops ? o[nops] : ""
	src = nops > 1 ? o[1] : ""

	if (op ~ /^call/) {
		for (i in cs) { delete tag[cs[i]]; delete elem[cs[i]] }
		next
	}
	# a load through the flag pointer: any memory operand based on it
	for (i = 1; i <= nops; i++) {
		b = membase(o[i])
		if (b != "" && (b in tag) && tag[b] == LOAD && !(i == nops && op ~ /^mov/)) {
			for (k in want)
				if (!seen[k]) { print "load of field " LOAD " before the store through field " k ": " line; done = 1; exit }
			print "ok"; done = 1; exit
		}
	}
	# a store through a wanted pointer
	if (op ~ /^mov/ && nops == 2 && dst ~ /\(/) {
		b = membase(dst)
		if (b != "" && (b in tag) && (tag[b] in want)) seen[tag[b]] = 1
		next
	}
	if (dst ~ /^%/) {
		d = norm(dst)
		sb = membase(src)
		if (op ~ /^mov/ && src ~ /\(/ && sb != "" && (sb in base || sb in elem)) {
			delete elem[d]; tag[d] = disp(src); next
		}
		if (op ~ /^lea/ && sb != "" && (sb in base || sb in elem)) {
			elem[d] = 1; delete tag[d]; next
		}
		if (op ~ /^add/ && src ~ /\(/ && sb != "" && (sb in base || sb in elem)) {
			delete elem[d]; tag[d] = disp(src); next
		}
		if (op ~ /^mov/ && src ~ /^%/ && (norm(src) in elem)) { elem[d] = 1; delete tag[d]; next }
		if (op ~ /^add/ && src ~ /^%/ && (norm(src) in base)) { elem[d] = 1; delete tag[d]; next }
		if (op ~ /^(add|sub)/ && src ~ /^\$/ && (d in elem)) next
		delete elem[d]
		if (op ~ /^mov/ && src ~ /^%/ && (norm(src) in base)) { base[d] = 1; delete tag[d]; next }
		if (op ~ /^mov/ && src ~ /^%/ && (norm(src) in tag)) { tag[d] = tag[norm(src)]; next }
		if (op ~ /^lea/ && (membase(src) in tag)) { tag[d] = tag[membase(src)]; next }
		if (op ~ /^(add|sub)/ && src ~ /^%/ && (norm(src) in tag)) { tag[d] = tag[norm(src)]; next }
		if (op ~ /^(add|sub)/ && (d in tag)) next
		if (op ~ /^(test|cmp|bt)/) next
		delete tag[d]
	}
}
END { if (!done) print "no load through field " LOAD " found" }
