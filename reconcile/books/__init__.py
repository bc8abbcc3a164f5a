"""The books a reconcile pass keeps: one module per subject (transfers, collections), each a
`Book` (`reconcile.books.book`) the one recorder (`reconcile.books.recorder`) writes through."""
