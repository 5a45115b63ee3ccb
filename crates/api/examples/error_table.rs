//! Prints the error table as the Markdown rows docs/cli.md carries (a test checks that
//! the document and this table agree). Run with `cargo run -p loci-api --example error_table`.

fn main() {
    println!("| kind | exit | HTTP |");
    println!("|---|---|---|");
    for row in loci_api::ErrorKind::TABLE {
        println!("| `{}` | {} | {} |", row.name, row.exit.code(), row.http);
    }
}
