module loci.example/go_types

go 1.19
