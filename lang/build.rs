fn main() {
    lalrpop::Configuration::new().use_cargo_dir_conventions().process().expect("lalrpop grammar failed to generate");
}
