// `sqlx::migrate!` embeds the migration files at compile time, but cargo
// does not know it reads them: without this, a new or edited migration is
// not picked up until something else in the crate changes.
fn main() {
    println!("cargo:rerun-if-changed=../migrations");
}
