"""Collections: the ones the caller may build studies on, and sharing them (services.collection_share)."""

from __future__ import annotations

from django.db.models import Count
from django.shortcuts import get_object_or_404
from drf_spectacular.utils import extend_schema
from rest_framework import generics
from rest_framework.exceptions import PermissionDenied, ValidationError
from rest_framework.response import Response
from rest_framework.views import APIView

from studies.api import serializers as s
from studies.api.permissions import IsResearcher
from studies.api.views.common import (
    ApiPagination,
    FilterMixin,
)
from studies.design import services
from studies.design.selectors import collections_visible_to


def _collections(request):
    return (
        collections_visible_to(request.user)
        .select_related("owner")
        .prefetch_related("shared_with")
        .annotate(document_count=Count("documents"))
        .order_by("name")
    )


class CollectionList(FilterMixin, generics.ListAPIView):
    """The collections the caller may build a study on (POST /api/studies/ with `collection`): their own,
    those shared with them and those of the studies they research on; every one for a superuser."""

    serializer_class = s.CollectionSerializer
    permission_classes = [IsResearcher]
    pagination_class = ApiPagination

    def get_queryset(self):
        return _collections(self.request)


class CollectionSharing(APIView):
    """Share a collection with a researcher (POST `{"username"}`; DELETE .../shared-with/<username>/ stops):
    `services.collection_share` / `collection_unshare`. A collection the caller cannot see is a 404; one they
    see but do not own is a 403 (only its owner, or a superuser, shares it); a name that is no researcher
    account is a 400 (the same for an assessor's name and an unknown one)."""

    permission_classes = [IsResearcher]

    def _collection(self, pk):
        collection = get_object_or_404(_collections(self.request), pk=pk)
        if not services.collection_may_share(self.request.user, collection):
            raise PermissionDenied("only the collection's owner shares it")
        return collection

    def _researcher(self, username: str):
        from django.contrib.auth import get_user_model

        user = get_user_model().objects.filter(username=username, is_staff=True, is_active=True).first()
        if user is None:
            raise ValidationError({"username": f"no researcher account named {username!r}"})
        return user

    def _answer(self, collection):
        fresh = _collections(self.request).get(pk=collection.pk)
        return Response(s.CollectionSerializer(fresh, context={"request": self.request}).data)

    @extend_schema(request=s.CollectionShareSerializer, responses={200: s.CollectionSerializer})
    def post(self, request, pk):
        collection = self._collection(pk)
        data = s.CollectionShareSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        user = self._researcher(data.validated_data["username"])
        try:
            services.collection_share(collection=collection, user=user, by=request.user)
        except services.CollectionAccessError as error:
            raise ValidationError({"username": str(error)}) from None
        return self._answer(collection)


class CollectionUnsharing(CollectionSharing):
    """Stop sharing the collection with this researcher (their studies already built on it keep it)."""

    http_method_names = ["delete", "options"]

    @extend_schema(request=None, responses={200: s.CollectionSerializer})
    def delete(self, request, pk, username):
        collection = self._collection(pk)
        services.collection_unshare(collection=collection, user=self._researcher(username), by=request.user)
        return self._answer(collection)
