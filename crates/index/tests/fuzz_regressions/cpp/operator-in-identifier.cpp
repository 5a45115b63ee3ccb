namespace internal_stream_operator_without_lexical_name_lookup {
struct StreamPrinter { void f(); };
}
void internal_stream_operator_without_lexical_name_lookup::StreamPrinter::f() {}
void my_operator_x::f() {}
