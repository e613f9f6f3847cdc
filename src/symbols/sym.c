/* placeholder: replaced by the module's implementation */
typedef int cbn_placeholder_sym;
