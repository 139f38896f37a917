//! A mesh written as a file: binary STL, PLY (binary, little-endian) or Wavefront OBJ, chosen
//! by the name's extension. STL repeats each triangle's three points (32-bit floats) with its
//! normal; PLY and OBJ list the vertices once (PLY as 32-bit floats, OBJ as decimal text that
//! reads back to the same doubles), with the vertices' normals where the mesh has them, and
//! the triangles by index.

use std::io::{self, Write};
use std::path::Path;

use super::Mesh;

/// The file formats [`write()`] knows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MeshFormat {
    /// Binary STL.
    Stl,
    /// Binary little-endian PLY.
    Ply,
    /// Wavefront OBJ (text).
    Obj,
}

impl MeshFormat {
    /// The format a file name's extension names (`.stl`, `.ply`, `.obj`, any case).
    pub fn of(path: &Path) -> Option<MeshFormat> {
        let ext = path.extension()?.to_str()?.to_ascii_lowercase();
        match ext.as_str() {
            "stl" => Some(MeshFormat::Stl),
            "ply" => Some(MeshFormat::Ply),
            "obj" => Some(MeshFormat::Obj),
            _ => None,
        }
    }
}

/// Writes `mesh` to `out` in `format`.
pub fn write(mesh: &Mesh, format: MeshFormat, out: &mut impl Write) -> io::Result<()> {
    match format {
        MeshFormat::Stl => stl(mesh, out),
        MeshFormat::Ply => ply(mesh, out),
        MeshFormat::Obj => obj(mesh, out),
    }
}

fn stl(mesh: &Mesh, out: &mut impl Write) -> io::Result<()> {
    let mut header = [b' '; 80];
    let title = b"ivjit mesh";
    header[..title.len()].copy_from_slice(title);
    out.write_all(&header)?;
    out.write_all(&(mesh.triangles.len() as u32).to_le_bytes())?;
    for t in &mesh.triangles {
        let [a, b, c] = t.map(|i| mesh.vertices[i as usize]);
        let n = normal(a, b, c);
        for v in [n, a, b, c] {
            for x in v {
                out.write_all(&(x as f32).to_le_bytes())?;
            }
        }
        out.write_all(&[0, 0])?;
    }
    Ok(())
}

fn ply(mesh: &Mesh, out: &mut impl Write) -> io::Result<()> {
    let normals = !mesh.normals.is_empty();
    write!(
        out,
        "ply\nformat binary_little_endian 1.0\ncomment ivjit mesh\nelement vertex {}\n\
         property float x\nproperty float y\nproperty float z\n{}element face {}\n\
         property list uchar uint vertex_indices\nend_header\n",
        mesh.vertices.len(),
        if normals {
            "property float nx\nproperty float ny\nproperty float nz\n"
        } else {
            ""
        },
        mesh.triangles.len()
    )?;
    for (i, v) in mesh.vertices.iter().enumerate() {
        let n = mesh.normals.get(i).filter(|_| normals);
        for x in v.iter().chain(n.into_iter().flatten()) {
            out.write_all(&(*x as f32).to_le_bytes())?;
        }
    }
    for t in &mesh.triangles {
        out.write_all(&[3])?;
        for i in t {
            out.write_all(&i.to_le_bytes())?;
        }
    }
    Ok(())
}

fn obj(mesh: &Mesh, out: &mut impl Write) -> io::Result<()> {
    writeln!(out, "# ivjit mesh")?;
    for [x, y, z] in &mesh.vertices {
        writeln!(out, "v {x:?} {y:?} {z:?}")?;
    }
    for [x, y, z] in &mesh.normals {
        writeln!(out, "vn {x:?} {y:?} {z:?}")?;
    }
    for t in &mesh.triangles {
        let [a, b, c] = t.map(|i| i + 1);
        if mesh.normals.is_empty() {
            writeln!(out, "f {a} {b} {c}")?;
        } else {
            writeln!(out, "f {a}//{a} {b}//{b} {c}//{c}")?;
        }
    }
    Ok(())
}

/// The unit normal of a triangle (zero for a degenerate one).
fn normal(a: [f64; 3], b: [f64; 3], c: [f64; 3]) -> [f64; 3] {
    let (u, v) = (
        [0, 1, 2].map(|d| b[d] - a[d]),
        [0, 1, 2].map(|d| c[d] - a[d]),
    );
    let n = [
        u[1] * v[2] - u[2] * v[1],
        u[2] * v[0] - u[0] * v[2],
        u[0] * v[1] - u[1] * v[0],
    ];
    let len = (n[0] * n[0] + n[1] * n[1] + n[2] * n[2]).sqrt();
    if len > 0.0 {
        n.map(|x| x / len)
    } else {
        [0.0; 3]
    }
}

/// Writes `mesh` to the file `path` in the format its extension names.
pub fn write_file(mesh: &Mesh, path: &Path) -> io::Result<()> {
    let format = MeshFormat::of(path).ok_or_else(|| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            format!(
                "{}: expected a name ending in .stl, .ply or .obj",
                path.display()
            ),
        )
    })?;
    let mut out = io::BufWriter::new(std::fs::File::create(path)?);
    write(mesh, format, &mut out)?;
    out.flush()
}
