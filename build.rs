//! Generates the parser from `grammar/expr.lalrpop` into OUT_DIR at build time.
fn main() {
    lalrpop::Configuration::new()
        .set_in_dir("grammar")
        .process()
        .expect("LALRPOP grammar failed to build");
}
