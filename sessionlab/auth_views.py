"""Sign-in pages that say so when the limit is reached (429, Retry-After): the login page, the password reset
form and the API's token endpoint. The counting and refusing is sessionlab/ratelimit.py's, in authenticate()
itself for sign-ins."""

from django.contrib import messages
from django.contrib.auth import views as auth_views
from drf_spectacular.utils import OpenApiResponse, extend_schema, inline_serializer
from rest_framework import serializers, status
from rest_framework.authtoken.models import Token
from rest_framework.authtoken.views import ObtainAuthToken
from rest_framework.response import Response

from . import api_errors, ratelimit


class LoginView(auth_views.LoginView):
    """Django's login page; past the limit it shows the form again with the reason and answers 429."""

    def post(self, request, *args, **kwargs):
        username = request.POST.get("username", "")
        wait = ratelimit.retry_after(request, username)
        if wait is not None:
            # An unbound form: binding it would call authenticate() again just to be refused.
            messages.error(request, ratelimit.message(wait))
            form = self.get_form_class()(request, initial={"username": username})
            response = self.render_to_response(self.get_context_data(form=form), status=429)
            response["Retry-After"] = str(wait)
            return response
        return super().post(request, *args, **kwargs)


class PasswordResetView(auth_views.PasswordResetView):
    """Django's password reset form: a link by e-mail to the account's address (EMAIL_BACKEND,
    docs/security.md). It answers the same whether or not an account has the address. Requests are limited
    per address and per client (ratelimit.reset_retry_after); past the limit, the form again with the reason
    and 429."""

    def post(self, request, *args, **kwargs):
        email = request.POST.get("email", "")
        wait = ratelimit.reset_retry_after(request, email if isinstance(email, str) else "")
        if wait is not None:
            minutes = max(1, round(wait / 60))
            messages.error(
                request,
                f"Too many password reset requests for this address or from here. Try again in {minutes} "
                f"minute{'s' if minutes != 1 else ''}.",
            )
            form = self.get_form_class()(initial={"email": email})
            response = self.render_to_response(self.get_context_data(form=form), status=429)
            response["Retry-After"] = str(wait)
            return response
        return super().post(request, *args, **kwargs)


class TokenView(ObtainAuthToken):
    """POST username and password, get the account's API token; past the limit, 429 with Retry-After.

    The credentials in the body are the only authentication: no session, so no CSRF token either."""

    authentication_classes = ()
    parser_classes = api_errors.PARSERS  # deep JSON is a 400, not a 500

    @extend_schema(
        request=ObtainAuthToken.serializer_class,
        responses={
            200: inline_serializer("AuthToken", {"token": serializers.CharField()}),
            400: OpenApiResponse(description="wrong username or password"),
            429: OpenApiResponse(description="too many failed sign-ins; see Retry-After"),
        },
    )
    def post(self, request, *args, **kwargs):
        username = request.data.get("username", "") if hasattr(request.data, "get") else ""
        username = username if isinstance(username, str) else ""
        wait = ratelimit.retry_after(request, username)
        if wait is not None:
            return Response(
                {"detail": ratelimit.message(wait)},
                status=status.HTTP_429_TOO_MANY_REQUESTS,
                headers={"Retry-After": str(wait)},
            )
        serializer = self.get_serializer(data=request.data)
        serializer.is_valid(raise_exception=True)  # a failure is counted by authenticate()'s signal
        user = serializer.validated_data["user"]
        ratelimit.success(request, user.get_username())  # no user_logged_in here: no session is opened
        token, _created = Token.objects.get_or_create(user=user)
        return Response({"token": token.key})


token_view = TokenView.as_view()
