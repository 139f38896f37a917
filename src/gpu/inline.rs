//! Splices the runtime's point functions into the kernel at their call sites.
//!
//! ptxas never inlines a PTX `.func` (TOOLCHAIN.md), so every point call of a linked kernel is
//! an ABI call: arguments and the return address through registers the callee saves to local
//! memory, and no scheduling across the call. The runtime is NVRTC's PTX of the CUDA math
//! library ([`super::runtime`]); its functions are small and regular, so a call site of the
//! kernel ([`crate::ptx`] writes each as one block of five lines) can be replaced by a copy of
//! the function's body in a nested block: its registers, labels and local arrays renamed apart
//! per copy, the parameter load turned into a move from the argument register, the return
//! value's store into a move to the result register, and `ret` into a branch to the block's
//! end. The instructions are the library's, in the same order. ptxas may contract a product
//! and a sum inside them (NVRTC writes them without a rounding modifier, with `--fmad=true`)
//! as it may in the linked function; the documented error bound the padding relies on is the
//! library's as compiled that way. It cannot contract them with the kernel's own instructions,
//! which all carry a rounding modifier. Whatever the splicer does not recognize makes it give
//! up (`None`), and the caller links as before.

use std::collections::HashSet;
use std::fmt::Write as _;

/// Call sites beyond which the kernel is linked instead (each copy lengthens the JIT's work).
pub(crate) const MAX_CALLS: usize = 8;

/// A runtime function: its name, its parameters' names and its body lines (between the braces).
struct Function {
    name: String,
    params: Vec<String>,
    body: Vec<String>,
}

/// The runtime split into the functions a kernel may call (`.visible .func`) and the rest
/// (forward declarations, constant tables, internal functions), which stays module-level.
struct Runtime {
    version: Option<String>,
    functions: Vec<Function>,
    rest: String,
}

/// The kernel `kernel` with every call of a `.visible` function of `runtime` replaced by the
/// function's body, and the runtime's other items before the kernel: one module that needs
/// no linking. `None` when either text is not in the expected form or the kernel makes more
/// than [`MAX_CALLS`] calls.
pub fn inline_runtime(kernel: &str, runtime: &str) -> Option<String> {
    if !kernel.is_ascii() || !runtime.is_ascii() {
        return None;
    }
    let rt = parse_runtime(runtime)?;
    // A function that calls another visible one would need that one's definition too.
    for f in &rt.functions {
        let named =
            |t: &str| t.contains(&format!("{},", f.name)) || t.contains(&format!("{};", f.name));
        if named(&rt.rest) || rt.functions.iter().any(|g| g.body.iter().any(|l| named(l))) {
            return None;
        }
    }
    let lines: Vec<&str> = kernel.lines().collect();
    let calls = lines
        .iter()
        .filter(|l| l.starts_with("\tcall (ret), "))
        .count();
    if calls == 0 || calls > MAX_CALLS {
        return None;
    }
    let mut out = String::with_capacity(kernel.len() + calls * 8 * 1024 + rt.rest.len());
    let mut i = 0;
    let mut copy = 0;
    let mut runtime_written = false;
    while i < lines.len() {
        let line = lines[i];
        if let (Some(v), Some(rv)) = (line.strip_prefix(".version "), rt.version.as_deref()) {
            // The newer of the two ISA versions reads both texts.
            let _ = writeln!(out, ".version {}", newer(v.trim(), rv)?);
        } else if line.starts_with(".extern .func ") {
            // The declarations of the runtime's functions; their definitions follow.
            if !runtime_written {
                out.push_str("// the ivjit runtime, spliced (src/gpu/inline.rs)\n");
                out.push_str(&rt.rest);
                runtime_written = true;
            }
        } else if line == "\t{" && lines.get(i + 1).is_some_and(|l| l.starts_with("\t.param ")) {
            let end = (i..lines.len()).find(|&j| lines[j] == "\t}")?;
            splice_call(&rt, &lines[i + 1..end], copy, &mut out)?;
            copy += 1;
            i = end;
        } else {
            out.push_str(line);
            out.push('\n');
        }
        i += 1;
    }
    (copy == calls).then_some(out)
}

/// The newer of two PTX ISA versions (`8.0`, `9.0`).
fn newer<'a>(a: &'a str, b: &'a str) -> Option<&'a str> {
    let parse = |v: &str| -> Option<(u32, u32)> {
        let (x, y) = v.split_once('.')?;
        Some((x.parse().ok()?, y.parse().ok()?))
    };
    Some(if parse(a)? >= parse(b)? { a } else { b })
}

/// Parses NVRTC's PTX of the runtime.
fn parse_runtime(text: &str) -> Option<Runtime> {
    let mut version = None;
    let mut functions = Vec::new();
    let mut rest = String::new();
    let lines: Vec<&str> = text.lines().collect();
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        let trimmed = line.trim();
        if let Some(v) = trimmed.strip_prefix(".version ") {
            version = Some(v.trim().to_string());
        } else if trimmed.starts_with(".target")
            || trimmed.starts_with(".address_size")
            || trimmed.starts_with("//")
            || trimmed.is_empty()
        {
        } else if line.starts_with(".visible .func") {
            // `.visible .func  (.param .b64 func_retval0) NAME(` params `)` `{` body `}`
            let name = line
                .split(')')
                .nth(1)?
                .trim()
                .strip_suffix('(')?
                .trim()
                .to_string();
            let mut params = Vec::new();
            i += 1;
            while lines.get(i)?.trim() != ")" {
                let p = lines[i].trim().trim_end_matches(',');
                params.push(p.rsplit(' ').next()?.to_string());
                i += 1;
            }
            i += 1;
            if lines.get(i)?.trim() != "{" {
                return None;
            }
            let close = (i..lines.len()).find(|&j| lines[j] == "}")?;
            let body = lines[i + 1..close].iter().map(|l| l.to_string()).collect();
            functions.push(Function { name, params, body });
            i = close;
        } else {
            // Anything else at the top level, up to its end: a `;` line, or a `{ ... }` body.
            let start = i;
            let mut depth = 0i32;
            loop {
                let l = lines.get(i)?;
                depth += l.matches('{').count() as i32 - l.matches('}').count() as i32;
                let ends = if l.starts_with(".global") {
                    l.trim_end().ends_with(';')
                } else {
                    depth == 0 && (l.trim_end().ends_with(';') || l.trim() == "}")
                };
                if ends {
                    break;
                }
                i += 1;
            }
            for l in &lines[start..=i] {
                rest.push_str(l);
                rest.push('\n');
            }
        }
        i += 1;
    }
    Some(Runtime {
        version,
        functions,
        rest,
    })
}

/// Writes the body of the called function in place of the call block `block` (its lines
/// between the braces: `.param` declarations, the argument stores, the call, the result load).
fn splice_call(rt: &Runtime, block: &[&str], copy: usize, out: &mut String) -> Option<()> {
    // `st.param.f64 [arg0], %f0;`
    let mut args = Vec::new();
    let mut call = None;
    let mut result = None;
    for l in block {
        let l = l.trim();
        if l.starts_with(".param ") {
        } else if let Some(s) = l.strip_prefix("st.param.") {
            let (_, v) = s.split_once(", ")?;
            args.push(v.strip_suffix(';')?.to_string());
        } else if let Some(s) = l.strip_prefix("call (ret), ") {
            call = Some(s.split(',').next()?.trim().to_string());
        } else if let Some(s) = l.strip_prefix("ld.param.") {
            let (ty, v) = s.split_once(' ')?;
            let (reg, _) = v.split_once(',')?;
            result = Some((ty.to_string(), reg.to_string()));
        } else {
            return None;
        }
    }
    let (name, (ty, result)) = (call?, result?);
    let f = rt.functions.iter().find(|f| f.name == name)?;
    if f.params.len() != args.len() {
        return None;
    }
    // The function's registers: `.reg .f64 %fd<47>;` declares %fd0..%fd46, `.reg .b64 %SP;` one.
    let mut regs = HashSet::new();
    for l in &f.body {
        if let Some(d) = l.trim().strip_prefix(".reg ") {
            let r = d.split_whitespace().last()?.trim_end_matches(';');
            // (A call sequence's `.reg .b32 temp_param_reg;` has no sigil and stays as it is.)
            if let Some(r) = r.split('<').next()?.strip_prefix('%') {
                regs.insert(r.to_string());
            }
        }
    }
    let tag = format!("i{copy}_");
    let end = format!("$L__ivjit_ret_{copy}");
    out.push_str("\t{\n");
    let _ = writeln!(out, "\t// {name}, spliced");
    for l in &f.body {
        let t = l.trim();
        if let Some(s) = t.strip_prefix("ld.param.") {
            // The parameter load becomes a move from the argument.
            let (lty, v) = s.split_once(char::is_whitespace)?;
            let (reg, src) = v.trim().split_once(',')?;
            let src = src.trim().strip_prefix('[')?.strip_suffix("];")?;
            let k = f.params.iter().position(|p| p == src);
            if let Some(k) = k {
                let reg = rename(reg.trim(), &regs, &tag);
                let _ = writeln!(out, "\tmov.{lty} {reg}, {};", args[k]);
                continue;
            }
        }
        if let Some(s) = t.strip_prefix("st.param.") {
            let (sty, v) = s.split_once(char::is_whitespace)?;
            if v.trim().starts_with("[func_retval0") {
                if sty != ty || !v.trim().starts_with("[func_retval0+0]") {
                    return None;
                }
                let (_, reg) = v.split_once(',')?;
                let reg = rename(reg.trim().strip_suffix(';')?, &regs, &tag);
                let _ = writeln!(out, "\tmov.{ty} {result}, {reg};");
                continue;
            }
        }
        if t == "ret;" {
            let _ = writeln!(out, "\tbra.uni {end};");
            continue;
        }
        out.push_str(&rename(l, &regs, &tag));
        out.push('\n');
    }
    let _ = writeln!(out, "{end}:\n\t}}");
    Some(())
}

/// `line` with the function's registers, labels and local depots renamed apart for one copy.
fn rename(line: &str, regs: &HashSet<String>, tag: &str) -> String {
    let mut out = String::with_capacity(line.len() + 16);
    let b = line.as_bytes();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c == b'%' || c == b'$' || line[i..].starts_with("__local_depot") {
            // A token: the sigil and the identifier after it.
            let start = i;
            i += 1;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                i += 1;
            }
            let token = &line[start..i];
            match c {
                b'%' => {
                    let ident = &token[1..];
                    let base = ident.trim_end_matches(|ch: char| ch.is_ascii_digit());
                    if regs.contains(base) || regs.contains(ident) {
                        let _ = write!(out, "%{tag}{ident}");
                    } else {
                        out.push_str(token);
                    }
                }
                b'$' => {
                    let _ = write!(out, "${tag}{}", &token[1..]);
                }
                _ => {
                    let _ = write!(out, "{token}_{tag}");
                }
            }
        } else {
            out.push(c as char);
            i += 1;
        }
    }
    out
}
