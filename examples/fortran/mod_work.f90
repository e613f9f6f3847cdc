! mod_work.f90 — a Fortran program with a module (tests/e2e/fortran.sh):
! a matrix product in three loops and a recursive fib, both module
! procedures, so gfortran names their symbols __work_MOD_matmul_loop and
! __work_MOD_fib, and inlines fib into itself.  Ends with STOP 3.
module work
contains
  recursive function fib(n) result(r)
    integer, intent(in) :: n
    integer :: r
    if (n < 2) then
      r = n
    else
      r = fib(n - 1) + fib(n - 2)
    end if
  end function fib

  subroutine matmul_loop(a, b, c, n)
    integer, intent(in) :: n
    real(8), intent(in) :: a(n, n), b(n, n)
    real(8), intent(out) :: c(n, n)
    integer :: i, j, k
    c = 0
    do j = 1, n
      do k = 1, n
        do i = 1, n
          c(i, j) = c(i, j) + a(i, k) * b(k, j)
        end do
      end do
    end do
  end subroutine matmul_loop
end module work

program mod_main
  use work
  implicit none
  real(8), allocatable :: a(:, :), b(:, :), c(:, :)
  integer :: n = 700
  allocate (a(n, n), b(n, n), c(n, n))
  a = 1.0d0
  b = 0.5d0
  call matmul_loop(a, b, c, n)
  print *, fib(35), c(1, 1)
  stop 3
end program mod_main
